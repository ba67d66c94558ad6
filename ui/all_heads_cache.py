"""Cached data of the All heads page: head thumbnails and summary figures per sentence.

The trace itself is shared read-only (ui.cache); these are small derived arrays (at most
72 × 48 × 48 floats), so st.cache_data may copy them on every rerun at no real cost.
"""

from __future__ import annotations

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attention_core import summarize_heads
from ui.cache import get_trace
from viz.head_grid import head_metrics, pool_blocks


@st.cache_data(max_entries=32, show_spinner="Drawing every head…")
def head_thumbnails(model: str, text: str, hide_special: bool) -> tuple[NDArray, int, int]:
    """Every head's pattern pooled to thumbnail size, rounded to 3 decimals, with the pooling
    factor and the number of tokens drawn. [CLS]/[SEP] rows and columns are dropped
    when hidden (unless nothing else is left)."""
    trace = get_trace(model, text)
    keep = np.flatnonzero(~trace.tokens.special_t) if hide_special else np.arange(trace.n_tokens)
    pattern = trace.pattern_lhqk
    if 0 < keep.size < trace.n_tokens:
        pattern = pattern[:, :, keep][:, :, :, keep]  # [l,h,t,t] -> [l,h,kept,kept]
    thumbs, factor = pool_blocks(pattern)
    return np.round(thumbs, 3), factor, pattern.shape[-1]


@st.cache_data(max_entries=32, show_spinner=False)
def head_figures(model: str, text: str) -> dict[str, NDArray]:
    """Summary figures of every head by label, each [l, h], over the full pattern."""
    trace = get_trace(model, text)
    return head_metrics(summarize_heads(trace.pattern_lhqk, trace.tokens.special_t))
