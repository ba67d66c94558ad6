"""The server's trace store: shared, read-only, bounded in bytes, one computation per sentence."""

import threading
import time

import numpy as np
import pytest

from attention_core import tokenize, trace_nbytes, trace_sentence
from server.trace_store import Superseded, TraceStore, nbytes
from tests.app.conftest import wait_until


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


def test_trace_nbytes_says_before_the_pass_what_the_trace_will_hold(model, traces):
    for n, trace in traces.items():
        assert trace_nbytes(model.config, trace.n_tokens) == nbytes(trace), n


def test_room_is_made_before_a_pass_so_stored_and_computing_stay_in_budget(traces):
    sizes = {n: nbytes(t) for n, t in traces.items()}
    store = TraceStore(budget=sizes[120] + sizes[60])
    store.get("a", lambda: traces[10])
    store.get("b", lambda: traces[120])
    seen = []

    def compute():  # while the pass runs: what the store holds plus what it has reserved
        seen.append((len(store), store.nbytes + store.reserved))
        return traces[60]

    store.get("c", compute, expected=lambda: sizes[60])
    # 'b' (big: a quarter of the budget or more) left before the pass, small 'a' stayed
    assert seen == [(1, sizes[10] + sizes[60])]
    assert store.reserved == 0 and store.nbytes == sizes[10] + sizes[60]
    store.get("d", lambda: traces[120], expected=lambda: 10**12)  # more than any budget
    assert len(store) == 1 and store.reserved == 0  # everything made room; the newest stays


def test_a_big_pass_makes_room_by_dropping_big_traces_not_a_class_of_small_ones(traces):
    sizes = {n: nbytes(t) for n, t in traces.items()}
    store = TraceStore(budget=sizes[120] + 5 * sizes[10])
    store.get("long-1", lambda: traces[120], session="heavy")  # least recently used
    for i in range(5):
        store.get(f"short-{i}", lambda: traces[10], session=f"student-{i}")
    store.get("long-2", lambda: traces[120], session="heavy", expected=lambda: sizes[120])
    assert "long-1" not in store._lru and all(f"short-{i}" in store._lru for i in range(5))
    assert store.nbytes == sizes[120] + 5 * sizes[10] <= store.budget


def test_a_lasting_clip_outlives_ordinary_traces_when_a_big_pass_makes_room(traces):
    """A heard clip (stored ``lasting``) is what the browser fetches layers of after its page
    drew: a big pass drops every ordinary trace, least recent first, before it drops the clip."""
    sizes = {n: nbytes(t) for n, t in traces.items()}
    store = TraceStore(budget=sizes[120] + sizes[60] + sizes[10])
    store.get("clip", lambda: traces[60], lasting=True)  # least recently used of all
    store.get("short-0", lambda: traces[10])
    # a pass that needs all but the clip's room: the ordinary short trace leaves, though the
    # clip was used less recently (least recently used alone would drop the clip)
    store.get("long", lambda: traces[120], expected=lambda: sizes[120] + sizes[10])
    assert set(store._lru) == {"clip", "long"} and store.lasting == {"clip"}
    store.get("huge", lambda: traces[120], expected=lambda: 10**12)  # nothing else fits
    assert set(store._lru) == {"huge"} and store.lasting == set()  # the clip went last


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
    np.testing.assert_array_equal(
        results[0].pattern_lhqk, trace_sentence(model, "dirty quantum plumbing").pattern_lhqk
    )


# Bounded concurrency and superseded requests (issue 14). Fake computes: threads and events,
# every wait bounded.
WAIT_S = 10


def _fake(trace, started=None, release=None, log=None, name=None):
    def compute():
        if log is not None:
            log.append(name)
        if started is not None:
            started.set()
        if release is not None:
            assert release.wait(WAIT_S)
        return trace

    return compute


def _run(target, results, key):
    def body():
        try:
            results[key] = target()
        except Exception as err:
            results[key] = err

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread


def test_at_most_slots_computations_run_at_once(traces):
    store = TraceStore(budget=2**30, slots=2)
    release = threading.Event()
    results, threads = {}, []
    for i in range(5):
        threads.append(
            _run(lambda i=i: store.get(i, _fake(traces[10], release=release)), results, i)
        )
    wait_until(lambda: store.running == 2)
    time.sleep(0.1)  # the other three stay waiting
    assert store.running == 2 and not results
    release.set()
    for t in threads:
        t.join(WAIT_S)
    assert store.peak_running == 2 and store.running == 0
    assert all(results[i] is traces[10] for i in range(5))
    assert store._computing == {} and store._latest == {}


def test_the_default_number_of_slots_is_the_number_of_cores():
    import os

    assert TraceStore(budget=1).slots == (os.cpu_count() or 1)


def test_a_sessions_newer_sentence_drops_its_older_waiting_one(traces):
    store = TraceStore(budget=2**30, slots=1)
    busy_started, release_busy = threading.Event(), threading.Event()
    log, results = [], {}
    busy = _run(
        lambda: store.get(
            "busy", _fake(traces[10], busy_started, release_busy, log, "busy"), session="other"
        ),
        results,
        "busy",
    )
    assert busy_started.wait(WAIT_S)
    old = _run(
        lambda: store.get("old", _fake(traces[10], log=log, name="old"), session="s"),
        results,
        "old",
    )
    wait_until(lambda: "old" in store._computing)
    new = _run(
        lambda: store.get("new", _fake(traces[60], log=log, name="new"), session="s"),
        results,
        "new",
    )
    old.join(WAIT_S)  # dropped at once, while the slot is still busy
    assert isinstance(results["old"], Superseded) and "new" not in results
    release_busy.set()
    busy.join(WAIT_S)
    new.join(WAIT_S)
    assert results["new"] is traces[60] and log == ["busy", "new"]  # "old" never computed
    assert len(store) == 2 and store._computing == {} and store._latest == {}


def test_a_superseded_key_another_session_wants_is_still_computed(traces):
    store = TraceStore(budget=2**30, slots=1)
    started, release = threading.Event(), threading.Event()
    results = {}
    busy = _run(lambda: store.get("busy", _fake(traces[10], started, release)), results, "b")
    assert started.wait(WAIT_S)
    a = _run(lambda: store.get("k", _fake(traces[60]), session="a"), results, "a")
    b = _run(lambda: store.get("k", _fake(traces[60]), session="b"), results, "b2")
    wait_until(lambda: store._computing.get("k", [None, 0])[1] == 2)
    # session a moves on; session b still wants "k"
    c = _run(lambda: store.get("other", _fake(traces[120]), session="a"), results, "c")
    release.set()
    for t in (busy, a, b, c):
        t.join(WAIT_S)
    assert results["b2"] is traces[60] and results["c"] is traces[120]
    assert isinstance(results["a"], Superseded) or results["a"] is traces[60]
    assert store._computing == {} and store._latest == {}


def test_wanted_false_drops_a_waiting_request_and_a_failing_compute_leaks_nothing(traces):
    store = TraceStore(budget=2**30, slots=1)
    started, release = threading.Event(), threading.Event()
    results = {}
    busy = _run(lambda: store.get("busy", _fake(traces[10], started, release)), results, "b")
    assert started.wait(WAIT_S)
    rerun_requested = threading.Event()
    waiting = _run(
        lambda: store.get(
            "k", _fake(traces[60]), session="s", wanted=lambda: not rerun_requested.is_set()
        ),
        results,
        "k",
    )
    time.sleep(0.1)
    assert "k" not in results
    rerun_requested.set()
    waiting.join(WAIT_S)
    assert isinstance(results["k"], Superseded)
    release.set()
    busy.join(WAIT_S)

    def boom():
        raise RuntimeError("no model")

    with pytest.raises(RuntimeError):
        store.get("fails", boom, session="s")
    assert store.running == 0 and store._computing == {} and store._latest == {}


def test_text_the_tokenizer_refuses_gives_its_slot_back(model, traces):
    """A lone surrogate made ``expected()`` (which tokenizes) raise after the slot was taken:
    two such requests held both slots and the replica computed nothing more."""
    store = TraceStore(budget=2**30, slots=2)
    bad, results = "x\ud800", {}

    def ask() -> object:
        return store.get(
            ("m", bad),
            lambda: trace_sentence(model, bad),
            expected=lambda: trace_nbytes(model.config, len(tokenize(model, bad))),
        )

    for i in range(3):  # more times than there are slots: a leaked slot hangs the third
        _run(ask, results, i).join(WAIT_S)
        assert isinstance(results.get(i), ValueError), results.get(i)
        assert "not valid Unicode" in str(results[i])
    assert store.running == 0 and store.reserved == 0 and store._computing == {}
    assert store.get("fine", lambda: traces[10]) is traces[10]  # the store still computes


def test_two_threads_on_the_real_model_never_exceed_one_slot(model):
    store = TraceStore(budget=2**30, slots=1)
    inside, peak, lock = [0], [0], threading.Lock()

    def compute(text):
        def run():
            with lock:
                inside[0] += 1
                peak[0] = max(peak[0], inside[0])
            try:
                return trace_sentence(model, text)
            finally:
                with lock:
                    inside[0] -= 1

        return run

    texts = [" ".join(["river bank"] * 60), " ".join(["money bank"] * 60)]
    results = {}
    threads = [_run(lambda t=t: store.get(t, compute(t)), results, t) for t in texts]
    for t in threads:
        t.join(120)
    assert peak[0] == 1 and store.peak_running == 1
    for text in texts:
        np.testing.assert_array_equal(
            results[text].pattern_lhqk, trace_sentence(model, text).pattern_lhqk
        )


def test_a_freed_slot_goes_to_the_session_that_used_the_least_lately(traces):
    store = TraceStore(budget=2**30, slots=1)
    store.get("heavy-1", lambda: time.sleep(0.3) or traces[10], session="heavy")
    assert store.usage("heavy") >= 0.25 and store.usage("light") == 0
    started, release, order, results = threading.Event(), threading.Event(), [], {}
    busy = _run(
        lambda: store.get("busy", _fake(traces[10], started, release), "other"), results, "busy"
    )
    assert started.wait(WAIT_S)
    heavy = _run(
        lambda: store.get("heavy-2", _fake(traces[10], log=order, name="heavy-2"), session="heavy"),
        results,
        "heavy",
    )
    wait_until(lambda: len(store._waiting) == 1)  # heavy waits first...
    light = _run(
        lambda: store.get("light-1", _fake(traces[10], log=order, name="light-1"), session="light"),
        results,
        "light",
    )
    wait_until(lambda: len(store._waiting) == 2)  # ...and light arrives later
    release.set()
    for thread in (busy, heavy, light):
        thread.join(WAIT_S)
    assert order == ["light-1", "heavy-2"]  # the session that used nothing goes first


def test_a_session_over_its_share_waits_while_others_go_at_once(traces):
    store = TraceStore(budget=2**30, slots=2, usage_cap_s=0.25)
    store.USAGE_HALF_LIFE_S = 2.0  # forget faster than the app, for a short test
    store.get("long-1", lambda: time.sleep(0.3) or traces[10], session="heavy")
    seen = {}

    def light():  # runs while the heavy session is still over its share: not held back by it
        seen["light"] = store.usage("heavy")
        time.sleep(0.05)  # a real pass: the light session is now one the share is kept for
        return traces[10]

    def heavy():  # runs only once its own use has decayed under the cap (~0.5 s here)
        seen["heavy"] = store.usage("heavy")
        return traces[10]

    store.get("light-1", light, session="light")
    store.get("long-2", heavy, session="heavy")
    assert seen["light"] > store.usage_cap_s >= seen["heavy"], seen


def test_a_session_alone_on_the_server_is_never_held_back(traces):
    # The share is kept for the others' sake: with nobody else around, a session far over it
    # (a visitor typing SmolLM2 prompts in a row) runs its next pass at once.
    store = TraceStore(budget=2**30, slots=2, usage_cap_s=0.05)
    store.USAGE_HALF_LIFE_S = 1e9  # no decay: held back, it would wait for ever
    store.get("long-1", lambda: time.sleep(0.2) or traces[10], session="alone")
    assert store.usage("alone") > 3 * store.usage_cap_s
    results = {}
    alone = _run(lambda: store.get("long-2", lambda: traces[10], session="alone"), results, "a")
    alone.join(WAIT_S)
    assert not alone.is_alive() and "a" in results
    # With another session active lately, the same request is held back (it is over its share).
    store.get("other-1", lambda: time.sleep(0.05) or traces[10], session="other")
    held = _run(lambda: store.get("long-3", lambda: traces[10], session="alone"), results, "h")
    held.join(0.5)
    assert held.is_alive() and "h" not in results
    store.usage_cap_s = 1e9  # let it go, so the thread ends
    held.join(WAIT_S)
    assert "h" in results
