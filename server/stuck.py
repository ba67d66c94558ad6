"""When a replica cannot compute: the trace store's slots watched over time.

``TraceStore`` (server/trace_store.py) tells a ``SlotWatch`` when each slot is taken and given
back; ``stuck`` turns that into a plain reason for the health check (server/health.py), or None.
Plain Python, no locks of its own: the store calls it with its lock held.
"""

from __future__ import annotations

import os
import time

# No legitimate pass here takes 120 s (a 512-token SmolLM2 pass on the back lane under a class
# took 11-17 s at worst); a queue whose slots all stay held while nothing is taken or given back
# for 6 s is not moving (a busy store turns its slots over well within that).
HOLD_LIMIT_S = 120.0
QUEUE_LIMIT_S = 6.0
HOLD_ENV = "ATTENTION_STUCK_HOLD_S"
QUEUE_ENV = "ATTENTION_STUCK_QUEUE_S"


def env_seconds(name: str, default: float) -> float:
    """A limit in seconds from the environment (``name``), else ``default``."""
    return float(os.environ.get(name, "") or default)


class SlotWatch:
    """When each held slot was taken, when a slot last changed hands, and since when a request
    has been left waiting (``starved``: the first request to wait since that hand-over)."""

    def __init__(self, hold_limit_s: float | None = None, queue_limit_s: float | None = None):
        self.hold_limit_s = hold_limit_s or env_seconds(HOLD_ENV, HOLD_LIMIT_S)
        self.queue_limit_s = queue_limit_s or env_seconds(QUEUE_ENV, QUEUE_LIMIT_S)
        self.held: dict[int, float] = {}  # ticket -> when its request took a slot
        self.moved = time.monotonic()  # when a slot was last taken or given back
        self.starved: float | None = None  # when a request began to wait since then

    def queued(self) -> None:
        """A request begins to wait for a slot."""
        if self.starved is None:
            self.starved = time.monotonic()

    def taken(self, ticket: int) -> None:
        self.held[ticket] = self.moved = time.monotonic()
        self.starved = None

    def given_back(self, ticket: int) -> None:
        del self.held[ticket]
        self.moved = time.monotonic()
        self.starved = None

    def stuck(self, now: float, waiting: int, slots: int) -> str | None:
        """Why no pass can go on, or None: a slot held past ``hold_limit_s``, or all ``slots``
        held while a request has waited ``queue_limit_s`` with none changing hands. It stays
        stuck once the waiting requests have gone (a visitor who gave up, a page moved to another
        replica): the slots are no freer, and the next visitor would wait as long."""
        longest = now - min(self.held.values(), default=now)
        if longest > self.hold_limit_s:
            return (
                f"a forward pass has held its slot for {longest:.0f} s"
                f" (limit {self.hold_limit_s:g} s)"
            )
        starved = now - (now if self.starved is None else self.starved)
        if len(self.held) >= slots and starved > self.queue_limit_s:
            return (
                f"all {slots} slots held and a request left waiting for {starved:.0f} s,"
                f" none taken or given back (limit {self.queue_limit_s:g} s;"
                f" {waiting} waiting now)"
            )
        return None
