"""The server's trace store: shared, read-only, bounded in bytes, one computation per sentence."""

import threading
import time

import numpy as np
import pytest

from attention_core import trace_sentence
from ui.cache import TraceStore, nbytes


@pytest.fixture(scope="module")
def traces(model):
    return {n: trace_sentence(model, " ".join(["word"] * n)) for n in (10, 60, 120)}


def test_nbytes_counts_every_array_of_the_trace(traces):
    trace = traces[60]
    assert nbytes(trace) > trace.pattern_lhqk.nbytes + trace.scores_lhqk.nbytes
    assert nbytes(trace) >= trace.hidden_ltd.nbytes + trace.tokens.input_ids_t.nbytes


def test_least_recently_used_traces_leave_once_the_budget_is_passed(traces):
    sizes = {n: nbytes(t) for n, t in traces.items()}
    store = TraceStore(budget=sizes[120] + sizes[10])
    assert store.get("a", lambda: traces[10]) is traces[10]
    assert store.get("b", lambda: traces[120]) is traces[120]
    assert store.get("a", lambda: pytest.fail("'a' is cached")) is traces[10]  # now newest
    store.get("c", lambda: traces[60])  # over budget: 'b' (least recent) leaves, 'a' stays
    assert len(store) == 2 and store.nbytes == sizes[10] + sizes[60] <= store.budget
    assert store.get("a", lambda: pytest.fail("'a' is cached")) is traces[10]
    recomputed = []
    store.get("b", lambda: recomputed.append(1) or traces[120])
    assert recomputed == [1]


def test_one_trace_bigger_than_the_budget_is_still_kept(traces):
    store = TraceStore(budget=1)
    store.get("big", lambda: traces[120])
    assert len(store) == 1
    store.get("next", lambda: traces[10])
    assert len(store) == 1 and store.get("next", lambda: pytest.fail("cached")) is traces[10]


def test_cached_arrays_are_read_only(model):
    store = TraceStore(budget=2**30)
    trace = store.get("k", lambda: trace_sentence(model, "the river bank"))
    with pytest.raises(ValueError, match="read-only"):
        trace.pattern_lhqk[0, 0, 0, 0] = 1.0
    assert not trace.tokens.input_ids_t.flags.writeable


def test_sessions_asking_for_one_sentence_at_once_compute_it_once(model):
    store = TraceStore(budget=2**30)
    calls = []

    def compute():
        calls.append(1)
        time.sleep(0.2)  # still computing when the other threads ask
        return trace_sentence(model, "dirty quantum plumbing")

    results = []
    threads = [
        threading.Thread(target=lambda: results.append(store.get("same", compute)))
        for _ in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(calls) == 1 and len(results) == 6
    assert all(r is results[0] for r in results)
    np.testing.assert_array_equal(results[0].pattern_lhqk, trace_sentence(
        model, "dirty quantum plumbing").pattern_lhqk)  # fmt: skip
