"""Cached data of the All heads page: every head's summary figures per sentence.

The trace itself is shared read-only (ui.cache); these are small derived arrays (5 × 72 floats),
so st.cache_data may copy them on every rerun at no real cost. The thumbnails are drawn in the
browser (explorer/grid.js) from the same layer blocks as the pattern page.
"""

from __future__ import annotations

import streamlit as st
from numpy.typing import NDArray

from attention_core import summarize_heads
from ui.cache import get_trace
from viz.head_grid import head_metrics


# Worst case 32 × ~4 kB (a few [6, 12] float arrays) = 128 kB.
@st.cache_data(max_entries=32, show_spinner=False)
def head_figures(model: str, text: str) -> dict[str, NDArray]:
    """Summary figures of every head by label, each [l, h], over the full pattern."""
    trace = get_trace(model, text)
    return head_metrics(summarize_heads(trace.pattern_lhqk, trace.tokens.special_t))
