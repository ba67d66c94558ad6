"""A fault hook for the serving tests: wedge this replica's trace store on request.

``routes(store)`` returns the hook's routes only when the environment says so
(``ATTENTION_FAULT_HOOKS=1``, set by tests alone); otherwise none, so the paths answer 404.
``POST /_faults/wedge`` takes every forward-pass slot of the store and holds it (threads waiting
on an Event, as a pass that never ends would), so that the next request needing a pass waits
for good and the health check (server/health.py) turns 503; ``POST /_faults/release`` lets
them go. Outside ``/api/``: the explorer's routes and their guard are not the hook's business.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from attention_core import Trace
from server.trace_store import TraceStore

ENV = "ATTENTION_FAULT_HOOKS"
WEDGE_PATH = "/_faults/wedge"
RELEASE_PATH = "/_faults/release"
HOLD_MAX_S = 600.0  # a wedge lets go by itself after this, so no thread outlives a forgotten test
TAKE_S = 5.0  # how long the route waits for its threads to hold every slot


class Released(Exception):
    """A wedge let go: its held passes end without a trace."""


class Wedge:
    """The threads holding the store's slots, and the Event that lets them go."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.holding: list[threading.Event] = []

    def hold(self, store: TraceStore) -> None:
        """One thread per slot, each asking the store for a pass that waits on ``release``."""
        for _ in range(store.slots):
            took = threading.Event()
            self.holding.append(took)
            threading.Thread(target=self._hold_one, args=(store, took), daemon=True).start()

    def _hold_one(self, store: TraceStore, took: threading.Event) -> None:
        def compute() -> Trace:
            took.set()
            self.release.wait(HOLD_MAX_S)
            raise Released

        with contextlib.suppress(Released):  # the store gave the slot back; nothing stored
            store.get(("fault-wedge", id(took)), compute)


def routes(store: Callable[[], TraceStore]) -> list[Route]:
    """The hook's routes when ATTENTION_FAULT_HOOKS=1, else none."""
    if os.environ.get(ENV) != "1":
        return []
    wedges: list[Wedge] = []

    async def wedge(_: Request) -> JSONResponse:
        held = Wedge()
        wedges.append(held)
        held.hold(store())
        deadline = time.monotonic() + TAKE_S
        while not all(e.is_set() for e in held.holding) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        count = sum(e.is_set() for e in held.holding)
        return JSONResponse({"slots": len(held.holding), "held": count})

    async def release(_: Request) -> JSONResponse:
        for held in wedges:
            held.release.set()
        count = len(wedges)
        wedges.clear()
        return JSONResponse({"released": count})

    return [
        Route(WEDGE_PATH, wedge, methods=["POST"]),
        Route(RELEASE_PATH, release, methods=["POST"]),
    ]
