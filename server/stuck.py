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
    """When each held slot was taken, and when a slot last changed hands."""

    def __init__(self, hold_limit_s: float | None = None, queue_limit_s: float | None = None):
        self.hold_limit_s = hold_limit_s or env_seconds(HOLD_ENV, HOLD_LIMIT_S)
        self.queue_limit_s = queue_limit_s or env_seconds(QUEUE_ENV, QUEUE_LIMIT_S)
        self.held: dict[int, float] = {}  # ticket -> when its request took a slot
        self.moved = time.monotonic()  # when a slot was last taken or given back

    def taken(self, ticket: int) -> None:
        self.held[ticket] = self.moved = time.monotonic()

    def given_back(self, ticket: int) -> None:
        del self.held[ticket]
        self.moved = time.monotonic()

    def stuck(self, now: float, waiting: int, slots: int) -> str | None:
        """Why no pass can go on, or None: a slot held past ``hold_limit_s``, or ``waiting``
        requests while all ``slots`` stayed held and none changed hands for ``queue_limit_s``."""
        longest = now - min(self.held.values(), default=now)
        if longest > self.hold_limit_s:
            return (
                f"a forward pass has held its slot for {longest:.0f} s"
                f" (limit {self.hold_limit_s:g} s)"
            )
        still = now - self.moved
        if waiting and len(self.held) >= slots and still > self.queue_limit_s:
            return (
                f"{waiting} request(s) waiting while all {slots} slots stayed held,"
                f" none taken or given back for {still:.0f} s (limit {self.queue_limit_s:g} s)"
            )
        return None
