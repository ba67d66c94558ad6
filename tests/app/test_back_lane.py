"""The back lane (server.lanes): big forward passes run on threads at a lower OS priority, so a
visitor pasting long texts takes the cores only when the class's short passes leave them."""

import os
import sys
import threading

import numpy as np
import pytest

from attention_core import tokenize, trace_nbytes, trace_sentence
from server.lanes import BACK_NICE, BackLane, lower_this_thread
from server.trace_store import TraceStore

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice")


def _nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


@linux_only
def test_the_lane_lowers_its_own_threads_and_not_the_callers():
    lane = BackLane(1)
    try:
        mine = _nice()
        seen = lane.run(lambda: (threading.current_thread().name, _nice()))
        assert seen[0].startswith("back-lane") and seen[1] >= BACK_NICE
        assert _nice() == mine  # the caller's thread keeps its priority
    finally:
        lane.shutdown()


@linux_only
def test_lowering_never_raises_a_thread_already_lower():
    out = {}

    def body():
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACK_NICE + 5)
        out["ok"] = lower_this_thread(BACK_NICE)
        out["nice"] = _nice()

    thread = threading.Thread(target=body)
    thread.start()
    thread.join(10)
    assert out == {"ok": True, "nice": BACK_NICE + 5}


def test_an_exception_in_the_lane_reaches_the_caller():
    lane = BackLane(1)
    try:
        with pytest.raises(ZeroDivisionError):
            lane.run(lambda: 1 / 0)
    finally:
        lane.shutdown()


def _where():
    return threading.current_thread().name


def test_a_big_pass_runs_on_the_lane_and_a_short_one_in_the_callers_thread(model):
    short, long = "the river bank was muddy", " ".join(["word"] * 60)
    big = trace_nbytes(model.config, len(tokenize(model, long)))
    store = TraceStore(budget=4 * big, slots=2, lane=BackLane(2))  # 60 words: a quarter
    try:
        where = {}

        def compute(text):
            def run():
                where[text] = _where()
                return trace_sentence(model, text)

            return run

        for text in (short, long):
            size = trace_nbytes(model.config, len(tokenize(model, text)))
            got = store.get(text, compute(text), session="s", expected=lambda n=size: n)
            np.testing.assert_array_equal(
                got.pattern_lhqk, trace_sentence(model, text).pattern_lhqk
            )
        assert where[short] == threading.current_thread().name
        assert where[long].startswith("back-lane")
    finally:
        store.lane.shutdown()


def test_a_session_over_its_share_runs_on_the_lane(model):
    trace = trace_sentence(model, "dirty quantum plumbing")
    store = TraceStore(budget=2**30, slots=2, usage_cap_s=0.0, lane=BackLane(1))
    store.USAGE_HALF_LIFE_S = 1e9  # no decay during the test
    try:
        where = []
        store.get("a", lambda: where.append(_where()) or trace, session="heavy")
        assert where == [threading.current_thread().name]  # no use yet: its own thread
        store.get("b", lambda: where.append(_where()) or trace, session="heavy")
        assert where[1].startswith("back-lane")  # over its share (any use > 0 s)
    finally:
        store.lane.shutdown()
