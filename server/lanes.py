"""The back lane: big forward passes run on worker threads at a lower OS priority, so a visitor
pasting 512-token texts takes the cores only when the class's short passes leave them free.

Linux gives every thread its own nice value; raising it needs no privilege, lowering it again
does, so the lane's threads are lowered once, when they start, and never raised. A light pass
on the same process or another replica then takes its core back at once (the kernel's weight
for nice 10 is about a tenth of nice 0's), and the heavy pass goes on with what is left.
Measured in one process on this 2-core machine (a 30-token MiniLM pass while another thread
loops 512-token passes): p50 37-38 ms with both at nice 0, 18-21 ms with the 512-token thread
at nice 10 (16.6 ms alone), while the loop finished 11-12 passes instead of 13-14.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

R = TypeVar("R")

BACK_NICE = 10  # the lane's threads, above the servers' 0 (higher is lower priority)


def lower_this_thread(nice: int) -> bool:
    """Raise the calling thread's nice value to ``nice`` (Linux: per thread). False where the
    system has no per-thread priority (elsewhere os.setpriority would lower the whole process)
    or refuses; the lane then runs at the process's priority."""
    if not sys.platform.startswith("linux") or not hasattr(os, "setpriority"):
        return False
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, max(nice, os.getpriority(os.PRIO_PROCESS, tid)))
    except OSError:
        return False
    return True


class BackLane:
    """``workers`` threads at nice ``nice``; ``run(fn)`` calls ``fn`` on one of them and waits
    for its result (or its exception)."""

    def __init__(self, workers: int, nice: int = BACK_NICE) -> None:
        self.nice = nice
        self._pool = ThreadPoolExecutor(
            max_workers=max(1, workers),
            thread_name_prefix="back-lane",
            initializer=lower_this_thread,
            initargs=(nice,),
        )

    def run(self, fn: Callable[[], R]) -> R:
        return self._pool.submit(fn).result()

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)
