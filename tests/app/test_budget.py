"""The one memory budget: traces counted at their real size as they grow, other work reserving
from the same ledger, refused plainly when there is no room, given back however it ends."""

from __future__ import annotations

import threading
from dataclasses import fields, is_dataclass
from typing import Any

import numpy as np
import pytest

from attention_core import trace_sentence
from attention_core.core.buffers import base_buffer
from attention_core.methods.rollout import trace_rollout
from server.budget import BUSY, Busy, reserved
from server.trace_store import TraceStore, nbytes

SENTENCE = " ".join(["The river bank was muddy after the rain."] * 12)  # ~120 tokens


def reachable_bytes(root: Any, model: Any) -> int:
    """Bytes of every ndarray reachable from ``root`` through dataclass fields, dicts, lists,
    tuples, closures and the attributes of the engine's objects (the layer cache), the model's
    weights aside: an engine buffer counts once and whole, any other array its own base."""
    skip = {id(model), id(model.params), id(model.config)}
    seen: set[int] = set()
    counted: set[int] = set()
    total, stack = 0, [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or id(obj) in skip or obj is None:
            continue
        seen.add(id(obj))
        if isinstance(obj, np.ndarray):
            held = base_buffer(obj)
            while held is None and isinstance(obj.base, np.ndarray):
                obj = obj.base  # a view holds its base's memory
            held = obj if held is None else held
            if id(held) not in counted:
                counted.add(id(held))
                total += held.nbytes
        elif is_dataclass(obj) and not isinstance(obj, type):
            stack.extend(getattr(obj, f.name) for f in fields(obj))
        elif isinstance(obj, dict):
            stack.extend(obj.values())
        elif isinstance(obj, list | tuple):
            stack.extend(obj)
        elif callable(obj) and getattr(obj, "__closure__", None):
            stack.extend(cell.cell_contents for cell in obj.__closure__)
        elif type(obj).__module__.startswith("attention_core") and hasattr(obj, "__dict__"):
            stack.extend(vars(obj).values())
    return total


def test_a_stored_decoder_trace_counts_every_byte_as_its_layers_fill(smollm2):
    store = TraceStore(budget=1 << 30)
    trace = store.get("s", lambda: trace_sentence(smollm2, SENTENCE))
    assert store.nbytes == reachable_bytes(trace, smollm2)
    for layer in range(smollm2.config.n_layers):  # fills the cache, then cycles through it
        trace.layer(layer)
        assert store.nbytes == reachable_bytes(trace, smollm2), layer
    trace_rollout(trace)  # the rollout memo
    assert store.nbytes == reachable_bytes(trace, smollm2) == nbytes(trace)
    assert store.nbytes > trace.hidden_ltd.nbytes + trace._cache.capacity * 1_000_000


def test_a_growing_trace_drops_others_to_stay_in_budget(smollm2):
    small = trace_sentence(smollm2, "A short one.")
    store = TraceStore(budget=0)
    store.get("small", lambda: small)
    trace = trace_sentence(smollm2, SENTENCE)
    store.budget = store.total = nbytes(trace) + nbytes(small) + 1000
    store.get("big", lambda: trace)
    assert len(store) == 2
    assert trace.next_top_ids_tk.shape == (trace.n_tokens, 10)  # read first: the trace grows
    assert len(store) == 1 and store.nbytes == nbytes(trace)


def test_other_work_drops_stored_traces_then_is_refused_plainly(model):
    trace = trace_sentence(model, SENTENCE)
    store = TraceStore(budget=nbytes(trace) * 2)
    store.get("t", lambda: trace)
    with reserved(store, nbytes(trace) * 2):  # room made: the trace leaves
        assert len(store) == 0 and store.other == nbytes(trace) * 2
        with pytest.raises(Busy, match="busy"), reserved(store, 1):
            pytest.fail("ran without room")
    assert store.other == 0
    too_big = pytest.raises(Busy, match="more than this server sets aside")
    with too_big, reserved(store, store.total + 1):
        pytest.fail("ran")
    assert str(Busy()) == BUSY


def test_a_reservation_is_given_back_when_its_work_raises():
    store = TraceStore(budget=1000)
    with pytest.raises(RuntimeError), reserved(store, 600):
        raise RuntimeError("the work failed")
    assert store.other == 0
    with reserved(store, 1000):
        assert store.other == 1000


def test_reservations_from_many_threads_never_pass_the_total():
    store = TraceStore(budget=1000)
    peak, lock, refused = [0], threading.Lock(), []

    def work() -> None:
        for _ in range(200):
            try:
                with reserved(store, 300), lock:
                    peak[0] = max(peak[0], store.other)
            except Busy:
                refused.append(1)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert store.other == 0 and 0 < peak[0] <= 900


@pytest.fixture
def app_store():
    """The app's store (ui.cache), its budget put back after the test."""
    from ui.cache import trace_store

    store = trace_store()
    total = store.total
    yield store
    store.total = total


def test_verify_runs_are_refused_plainly_without_room_and_hold_nothing_after(model, app_store):
    from ui.listen import verify as listen_verify
    from ui.text import verify

    trace = trace_sentence(model, "A short check.")
    app_store.total = 1 << 20  # 1 MB: no room for any check
    with pytest.raises(Busy, match="more than this server sets aside"):
        verify.verified("minilm", "A short check.", trace)
    with pytest.raises(Busy):
        listen_verify.verified_clip("no clip", None, ())  # refused before the clip is read
    assert app_store.other == 0


def test_whisper_holds_nothing_after_a_clip_it_cannot_hear(app_store):
    from ui.cache import whisper_error
    from ui.listen.cache import heard

    if whisper_error():
        pytest.skip("Whisper is not installed")
    with pytest.raises(ValueError):
        heard("empty", np.zeros(0, np.float32), (0, 0))
    assert app_store.other == 0 and app_store.reserved == 0
