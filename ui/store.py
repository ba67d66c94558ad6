"""The trace store of this server process: one per process (st.cache_resource), bounded by
its byte budget and the one memory budget (server/budget.py). It keeps the sentences' traces
(``ui.cache.get_trace``) and Whisper's heard clips (``ui.listen.cache``) alike; ``ui.cache`` hands
it on."""

from __future__ import annotations

import os
import threading

import streamlit as st

from server.budget import TOTAL_BYTES
from server.lanes import BackLane
from server.memory import trim_periodically
from server.trace_store import TraceStore

# Memory for traces, stored and computing (one 512-token trace is 235 MB, a 128-token one 16 MB);
# ATTENTION_TRACE_CACHE_MB overrides it (e.g. on a bigger server).
TRACE_BUDGET_MB = int(os.environ.get("ATTENTION_TRACE_CACHE_MB", "320"))
# Forward passes at once; ATTENTION_TRACE_SLOTS overrides the default, the number of cores.
TRACE_SLOTS = int(os.environ.get("ATTENTION_TRACE_SLOTS", "0")) or None


# One entry (no arguments): the store, bounded by its own byte budget.
@st.cache_resource(max_entries=1, show_spinner=False)
def trace_store() -> TraceStore:
    """The one store of this server process (and the thread that trims freed memory)."""
    threading.Thread(
        target=trim_periodically, args=(threading.Event(),), name="malloc-trim", daemon=True
    ).start()
    store = TraceStore(TRACE_BUDGET_MB * 2**20, TRACE_SLOTS)
    store.total = max(TOTAL_BYTES, store.budget)  # everything visitors start (server.budget)
    if os.environ.get("ATTENTION_BACK_LANE", "1") != "0":  # 0: every pass at one priority
        store.lane = BackLane(store.slots)  # big passes at a lower priority (server.lanes)
    return store
