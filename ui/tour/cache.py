"""The tour's cached computations, each a thin st.cache_* wrapper over one engine call: the d_k
saturation curve of the sentence's first layer, the engine's cost at growing lengths (also a
long text's, which the Long text page shows), and the padding example. The models and traces
they read are ui.cache's."""

from __future__ import annotations

import os
from contextlib import AbstractContextManager, nullcontext
from typing import cast

import streamlit as st

from attention_core.core.family import predicts_next
from attention_core.lessons.cost import CostPoint, measure_cost, time_forward
from attention_core.lessons.demos import Padding, SplitPoint, measure_split, padding_demo
from attention_core.lessons.one_pass import OnePass, one_pass
from attention_core.lessons.saturation import Saturation, saturation_curve
from ui.cache import as_encoder, as_encoder_trace, get_model, get_trace
from ui.presets import DEFAULT_SENTENCE

try:
    from threadpoolctl import threadpool_limits
except ImportError:  # comes with scikit-learn (a sentence-transformers dependency); optional here
    threadpool_limits = None

N_PAD = 3  # [PAD] tokens appended in the padding example


# Worst case 16 × ~2 kB = 32 kB.
@st.cache_data(max_entries=16, show_spinner="Measuring softmax saturation for d_k = 1…384…")
def layer_saturation(model_name: str, text: str) -> Saturation:
    """Random heads of growing d_k on the sentence's first-layer input (the tour)."""
    return saturation_curve(get_trace(model_name, text).hidden_ltd[0])


def _one_blas_thread() -> AbstractContextManager[object]:
    """Timings on a shared machine: multi-threaded BLAS waits on busy cores (a 16-token pass
    measured 20 ms one moment and 700 ms the next); one thread keeps the growth readable."""
    if threadpool_limits is None:
        return nullcontext()
    return cast(AbstractContextManager[object], threadpool_limits(limits=1, user_api="blas"))


# Worst case 2 × < 1 kB (a handful of timings).
@st.cache_data(max_entries=2, show_spinner="Timing the engine at 16 to 512 tokens (once)…")
def cost_points(model_name: str) -> tuple[tuple[CostPoint, ...], float, int, bool]:
    """One timed forward pass per length (measured once per server: the time depends on the
    length, not the words), the 1-minute load average, the core count, and whether BLAS was
    held to one thread."""
    with _one_blas_thread():
        points = measure_cost(get_model(model_name), DEFAULT_SENTENCE)
    return points, os.getloadavg()[0], os.cpu_count() or 1, threadpool_limits is not None


# Worst case 16 × < 1 kB (one timing each: a model's lengths, up to 2,048 tokens).
@st.cache_data(max_entries=16, show_spinner=False)
def long_cost_point(model_name: str, n_tokens: int, text: str) -> tuple[CostPoint, float]:
    """One timed forward pass over ``text`` repeated to ``n_tokens`` tokens (the page times each
    length in turn under its own progress bar), and the 1-minute load average right after."""
    with _one_blas_thread():
        point = time_forward(get_model(model_name), text, n_tokens)
    return point, os.getloadavg()[0]


# Worst case 2 × < 1 kB.
@st.cache_data(max_entries=2, show_spinner="Timing attention and the dense layers (once)…")
def split_points(model_name: str) -> tuple[SplitPoint, ...]:
    """One layer's time split between attention and the dense layers at 16 to 512 tokens."""
    with _one_blas_thread():
        return measure_split(as_encoder(get_model(model_name)))


# Worst case 4 × 24 MB (layer 0's 12 × 512² patterns with and without the mask, pickled) = 96 MB.
@st.cache_data(max_entries=4, show_spinner=False)
def padding(model_name: str, text: str) -> Padding:
    """Layer 0 on the sentence plus ``N_PAD`` [PAD] tokens, without and with the padding mask."""
    model, trace = as_encoder(get_model(model_name)), as_encoder_trace(get_trace(model_name, text))
    return padding_demo(model, trace, N_PAD)


# Worst case 16 × ~5 kB (a probability per token, at most 512).
@st.cache_data(max_entries=16, show_spinner=False)
def decoder_one_pass(model_name: str, text: str) -> OnePass:
    """A decoder's one pass read as training reads it (``lessons.one_pass``)."""
    trace = get_trace(model_name, text)
    if not predicts_next(trace):
        raise ValueError(f"{model_name} does not predict the next token")
    return one_pass(get_model(model_name), trace)
