"""When a replica cannot compute: the trace store's slots watched over time.

``TraceStore`` (server/trace_store.py) tells a ``SlotWatch`` when each slot is taken and given
back; ``stuck`` turns that into a plain reason for the health check (server/health.py), or None.
Plain Python, no locks of its own: the store calls it with its lock held.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

# No legitimate pass here takes 120 s (a 512-token SmolLM2 pass on the back lane under a class
# took 11-17 s at worst); a queue whose slots all stay held while nothing is taken or given back
# for 6 s is not moving (a busy store turns its slots over well within that).
HOLD_LIMIT_S = 120.0
QUEUE_LIMIT_S = 6.0
# ... unless the process computed meanwhile, or one of its threads is runnable now: a class's
# load once held both slots of a replica for 7 s with requests waiting, and once for 9 s with
# 0.06 core used (most likely its passes on the back lane at nice 10, starved by the busy
# machine: tests/serve/test_classroom.py); a wedged replica uses ~0.01 core, every thread asleep.
MIN_CORES = 0.25
HOLD_ENV = "ATTENTION_STUCK_HOLD_S"
QUEUE_ENV = "ATTENTION_STUCK_QUEUE_S"


def runnable_threads() -> int:
    """Threads of this process, the caller's aside, running or waiting for a core now (state R
    in /proc; 0 where there is no /proc): a pass computes or is starved, not wedged."""
    me = str(threading.get_native_id())
    count = 0
    for task in Path("/proc/self/task").glob("*"):
        try:
            state = (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue  # the thread ended meanwhile
        count += state == "R" and task.name != me
    return count


def env_seconds(name: str, default: float) -> float:
    """A limit in seconds from the environment (``name``), else ``default``."""
    return float(os.environ.get(name, "") or default)


class SlotWatch:
    """When each held slot was taken, when a slot last changed hands, and since when a request
    has been left waiting (``starved``: the first to wait since that hand-over); with the
    process's CPU time at those moments, to tell a slow replica from one that does nothing."""

    def __init__(self, hold_limit_s: float | None = None, queue_limit_s: float | None = None):
        self.hold_limit_s = hold_limit_s or env_seconds(HOLD_ENV, HOLD_LIMIT_S)
        self.queue_limit_s = queue_limit_s or env_seconds(QUEUE_ENV, QUEUE_LIMIT_S)
        self.held: dict[int, float] = {}  # ticket -> when its request took a slot
        self.moved = (time.monotonic(), time.process_time())  # a slot last taken or given back
        self.starved: tuple[float, float] | None = None  # a request began to wait since then

    def queued(self) -> None:
        """A request begins to wait for a slot."""
        if self.starved is None:
            self.starved = (time.monotonic(), time.process_time())

    def taken(self, ticket: int) -> None:
        self._moved()
        self.held[ticket] = self.moved[0]

    def given_back(self, ticket: int) -> None:
        del self.held[ticket]
        self._moved()

    def _moved(self) -> None:
        self.moved, self.starved = (time.monotonic(), time.process_time()), None

    def stuck(
        self, now: float, cpu: float, waiting: int, slots: int, runnable: int = 0
    ) -> str | None:
        """Why no pass can go on, or None, at ``now`` (monotonic) with the process at ``cpu``
        seconds of CPU: a slot held past ``hold_limit_s``; or all ``slots`` held while a request
        has waited ``queue_limit_s`` with none changing hands, the process computing less than
        MIN_CORES meanwhile and none of its other threads ``runnable`` now (passes that hold
        their slots long under a class's load use the CPU or wait for it; wedged ones sleep). It
        stays stuck once the waiting requests have gone (a visitor who gave up, a page moved to
        another replica): the next would wait as long."""
        longest = now - min(self.held.values(), default=now)
        if longest > self.hold_limit_s:
            return (
                f"a forward pass has held its slot for {longest:.0f} s"
                f" (limit {self.hold_limit_s:g} s)"
            )
        since = self.starved or (self.moved if waiting else None)
        if since is None or len(self.held) < slots or now - since[0] <= self.queue_limit_s:
            return None
        cores = (cpu - since[1]) / (now - since[0])
        if cores >= MIN_CORES or runnable:
            return None
        return (
            f"all {slots} slots held and a request left waiting for {now - since[0]:.0f} s,"
            f" none taken or given back, {cores:.2f} of a core used meanwhile"
            f" (limits {self.queue_limit_s:g} s, {MIN_CORES:g} core; {waiting} waiting now)"
        )
