"""A stuck replica is seen: the trace store says when it cannot compute (``TraceStore.stuck``),
the health check answers 503 with that reason (server/health.py), and the fault hook that wedges
a store exists only when the environment asks for it (server/faults.py).

The store runs real traces of the real model; the computes that hold a slot wait on Events, and
every wait is bounded. ``stuck(now)`` is given a later ``now`` instead of sleeping past a limit.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from attention_core import trace_sentence
from server import faults
from server.health import HEALTH_PATH, HealthMiddleware
from server.stuck import HOLD_LIMIT_S, QUEUE_LIMIT_S, runnable_threads
from server.trace_store import TraceStore
from tests.app.conftest import wait_until

WAIT_S = 10


@pytest.fixture(scope="module")
def trace(model):
    return trace_sentence(model, "the river bank was muddy")


def _holding(store: TraceStore, trace, key: str, release: threading.Event) -> threading.Thread:
    """A request that takes a slot (once one is free) and holds it until ``release``."""

    def compute():
        assert release.wait(WAIT_S)
        return trace

    thread = threading.Thread(target=lambda: store.get(key, compute), daemon=True)
    thread.start()
    return thread


def _stuck(store: TraceStore, now: float | None = None, cpu: float | None = None) -> str | None:
    """The store's answer with no other thread runnable (the test process's own threads, such
    as BLAS workers, must not decide; ``runnable_threads`` has its own test)."""
    return store.stuck(now, cpu, runnable=0)


def test_an_idle_store_and_a_busy_one_whose_slots_turn_over_are_not_stuck(trace):
    store = TraceStore(budget=2**30, slots=2)
    assert _stuck(store) is None
    assert _stuck(store, time.monotonic() + 10 * HOLD_LIMIT_S) is None  # nothing held, ever
    release = threading.Event()
    threads = [_holding(store, trace, f"k{i}", release) for i in range(3)]
    wait_until(lambda: store.running == 2 and len(store._waiting) == 1)
    # Every slot held and one request waiting, but a slot changed hands just now: moving.
    assert _stuck(store) is None
    release.set()
    for t in threads:
        t.join(WAIT_S)
    assert store.running == 0 and _stuck(store, time.monotonic() + 10 * HOLD_LIMIT_S) is None


def test_every_slot_held_and_a_queue_that_does_not_move_is_stuck(trace):
    store = TraceStore(budget=2**30, slots=2)
    release = threading.Event()
    held = [_holding(store, trace, f"held-{i}", release) for i in range(2)]
    wait_until(lambda: store.running == 2)
    later = time.monotonic() + QUEUE_LIMIT_S + 1
    assert _stuck(store, later) is None  # nobody waits: long passes are not a stuck queue
    waiter = _holding(store, trace, "waiter", release)
    wait_until(lambda: len(store._waiting) == 1)
    reason = _stuck(store, time.monotonic() + QUEUE_LIMIT_S + 1)
    assert reason is not None and "all 2 slots held" in reason and "1 waiting now" in reason
    assert _stuck(store) is None  # within the limit it is only busy
    release.set()
    for t in [*held, waiter]:
        t.join(WAIT_S)
    assert _stuck(store, time.monotonic() + QUEUE_LIMIT_S + 1) is None  # given back: unstuck


def test_slots_held_long_while_the_process_computes_are_busy_not_stuck(trace):
    """Under a class's load a pass may hold its slot past the queue limit while others wait;
    it uses the CPU or waits for a core, where a wedged one sleeps."""
    store = TraceStore(budget=2**30, slots=1)
    release = threading.Event()
    threads = [_holding(store, trace, key, release) for key in ("long pass", "waiting")]
    wait_until(lambda: store.running == 1 and len(store._waiting) == 1)
    since, cpu = store.watch.starved or store.watch.moved
    window = QUEUE_LIMIT_S + 1
    assert _stuck(store, since + window, cpu + 0.5 * window) is None  # half a core: computing
    reason = _stuck(store, since + window, cpu + 0.01 * window)
    assert reason is not None and "0.01 of a core" in reason
    # A pass waiting for a core on a busy machine (runnable, starved) is not stuck either.
    assert store.stuck(since + window, cpu + 0.01 * window, runnable=1) is None
    release.set()
    for t in threads:
        t.join(WAIT_S)


def test_requests_still_waiting_after_a_hand_over_count_from_it(trace):
    store = TraceStore(budget=2**30, slots=1)
    first, second = threading.Event(), threading.Event()
    a = _holding(store, trace, "a", first)
    wait_until(lambda: store.running == 1)
    b, c = _holding(store, trace, "b", second), _holding(store, trace, "c", second)
    wait_until(lambda: len(store._waiting) == 2)
    first.set()  # "a" ends; "b" or "c" takes the slot and holds it; the other still waits
    wait_until(lambda: store.running == 1 and len(store._waiting) == 1)
    assert store.watch.starved is None  # nobody began to wait since the hand-over
    assert _stuck(store) is None
    assert _stuck(store, store.watch.moved[0] + QUEUE_LIMIT_S + 1) is not None
    second.set()
    for t in (a, b, c):
        t.join(WAIT_S)


def test_a_stuck_store_stays_stuck_when_its_waiting_visitor_gives_up(trace):
    """The page whose pass waited moves to another replica (HAProxy closes its websocket): the
    held slots are no freer, so the store must not look healthy again until one changes hands."""
    store = TraceStore(budget=2**30, slots=1)
    release, gave_up = threading.Event(), threading.Event()
    held = _holding(store, trace, "held", release)
    wait_until(lambda: store.running == 1)
    results: dict = {}

    def visitor():
        try:
            store.get("v", lambda: trace, session="s", wanted=lambda: not gave_up.is_set())
        except Exception as err:
            results["v"] = err

    thread = threading.Thread(target=visitor, daemon=True)
    thread.start()
    wait_until(lambda: len(store._waiting) == 1)
    gave_up.set()
    thread.join(WAIT_S)
    assert type(results["v"]).__name__ == "Superseded" and not store._waiting
    reason = _stuck(store, time.monotonic() + QUEUE_LIMIT_S + 1)
    assert reason is not None and "0 waiting now" in reason
    release.set()
    held.join(WAIT_S)
    assert _stuck(store, time.monotonic() + QUEUE_LIMIT_S + 1) is None  # a slot changed hands


def test_a_slot_held_past_the_hold_limit_is_stuck_even_with_nobody_waiting(trace):
    store = TraceStore(budget=2**30, slots=2)
    release = threading.Event()
    thread = _holding(store, trace, "long", release)
    wait_until(lambda: store.running == 1)
    assert _stuck(store, time.monotonic() + HOLD_LIMIT_S - 5) is None
    reason = _stuck(store, time.monotonic() + HOLD_LIMIT_S + 5)
    assert reason is not None and "held its slot" in reason and f"{HOLD_LIMIT_S:g} s" in reason
    release.set()
    thread.join(WAIT_S)
    assert _stuck(store, time.monotonic() + HOLD_LIMIT_S + 5) is None


def test_a_failing_compute_gives_its_slot_back_to_the_watch_too(trace):
    store = TraceStore(budget=2**30, slots=1)

    def boom():
        raise RuntimeError("no model")

    with pytest.raises(RuntimeError):
        store.get("k", boom)
    assert store.watch.held == {} and _stuck(store, time.monotonic() + 10 * HOLD_LIMIT_S) is None


def test_the_limits_come_from_the_environment(trace, monkeypatch):
    monkeypatch.setenv("ATTENTION_STUCK_HOLD_S", "30")
    monkeypatch.setenv("ATTENTION_STUCK_QUEUE_S", "2.5")
    store = TraceStore(budget=2**30, slots=1)
    assert (store.watch.hold_limit_s, store.watch.queue_limit_s) == (30.0, 2.5)
    release = threading.Event()
    thread = _holding(store, trace, "k", release)
    wait_until(lambda: store.running == 1)
    assert "limit 30 s" in (_stuck(store, time.monotonic() + 31) or "")
    release.set()
    thread.join(WAIT_S)


def test_a_thread_computing_outside_the_gil_counts_as_runnable():
    """NumPy releases the GIL: a pass that computes, or waits for a core, is in state R."""
    done = threading.Event()

    def compute():
        a = np.ones((400, 400), dtype=np.float32)
        deadline = time.monotonic() + WAIT_S
        while not done.is_set() and time.monotonic() < deadline:
            a = np.tanh(a @ a / 400)

    thread = threading.Thread(target=compute, daemon=True)
    thread.start()
    try:
        wait_until(lambda: runnable_threads() >= 1)
    finally:
        done.set()
        thread.join(WAIT_S)


def test_a_lock_nobody_gives_back_is_reported():
    store = TraceStore(budget=2**30, slots=1)
    taken, release = threading.Event(), threading.Event()

    def hog():
        with store._lock:
            taken.set()
            release.wait(WAIT_S)

    thread = threading.Thread(target=hog, daemon=True)
    thread.start()
    assert taken.wait(WAIT_S)
    assert "lock" in (_stuck(store) or "")
    release.set()
    thread.join(WAIT_S)
    assert _stuck(store) is None


def _app(stuck, extra_routes=()) -> Starlette:
    """A stand-in for Streamlit: its own health route, answering "ok"."""

    async def health(_: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    routes = [Route(HEALTH_PATH, health, methods=["GET", "HEAD"]), *extra_routes]
    return Starlette(routes=routes, middleware=[Middleware(HealthMiddleware, stuck=stuck)])


def test_the_health_check_answers_503_with_the_reason_while_stuck_and_passes_on_otherwise():
    reason: list[str | None] = [None]
    client = TestClient(_app(lambda: reason[0]))
    ok = client.get(HEALTH_PATH)
    assert (ok.status_code, ok.text) == (200, "ok")
    reason[0] = "every slot held"
    stuck = client.get(HEALTH_PATH)
    assert stuck.status_code == 503
    assert stuck.json() == {"status": "stuck", "reason": "every slot held"}
    assert stuck.headers["cache-control"] == "no-store"
    head = client.head(HEALTH_PATH)
    assert head.status_code == 503 and head.content == b""
    assert client.get("/elsewhere").status_code == 404  # other paths are not its business
    reason[0] = None
    assert client.get(HEALTH_PATH).status_code == 200


def test_without_the_environment_the_fault_hook_does_not_exist(monkeypatch):
    monkeypatch.delenv(faults.ENV, raising=False)
    store = TraceStore(budget=2**30, slots=2)
    assert faults.routes(lambda: store) == []
    client = TestClient(_app(lambda: _stuck(store), faults.routes(lambda: store)))
    assert client.post(faults.WEDGE_PATH).status_code == 404
    assert store.running == 0


def test_the_fault_hook_wedges_every_slot_and_the_health_check_sees_it(trace, monkeypatch):
    monkeypatch.setenv(faults.ENV, "1")
    monkeypatch.setenv("ATTENTION_STUCK_QUEUE_S", "0.2")
    store = TraceStore(budget=2**30, slots=2)
    client = TestClient(_app(lambda: _stuck(store), faults.routes(lambda: store)))
    assert client.post(faults.WEDGE_PATH).json() == {"slots": 2, "held": 2}
    assert store.running == 2 and client.get(HEALTH_PATH).status_code == 200  # nobody waits
    release = threading.Event()
    visitor = _holding(store, trace, "a visitor's sentence", release)
    answers = []  # read the 503 itself: a second request may meet the CPU rule's noisy window
    wait_until(lambda: answers.append(client.get(HEALTH_PATH)) or answers[-1].status_code == 503)
    assert "left waiting" in answers[-1].json()["reason"]
    release.set()
    assert client.post(faults.RELEASE_PATH).json() == {"released": 1}
    visitor.join(WAIT_S)
    wait_until(lambda: store.running == 0)
    assert client.get(HEALTH_PATH).status_code == 200 and "a visitor's sentence" in store._lru
