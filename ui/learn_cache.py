"""Cached computations of the guided tour that the shared trace does not hold."""

from __future__ import annotations

import os

import streamlit as st

from attention_core import (
    CostPoint,
    DecoderTrace,
    Saturation,
    measure_cost,
    run_decoder,
    saturation_curve,
    tokenize,
)
from attention_core.demos import Padding, SplitPoint, measure_split, padding_demo
from ui.cache import get_model, get_trace
from ui.presets import DEFAULT_SENTENCE

try:
    from threadpoolctl import threadpool_limits
except ImportError:  # comes with scikit-learn (a sentence-transformers dependency); optional here
    threadpool_limits = None

DECODER_MAX_TOKENS = 64  # longest source or target the decoder demonstration reads
N_PAD = 3  # [PAD] tokens appended in the padding example


# Worst case 16 × ~2 kB = 32 kB.
@st.cache_data(max_entries=16, show_spinner="Measuring softmax saturation for d_k = 1…384…")
def saturation(model_name: str, text: str) -> Saturation:
    """Random heads of growing d_k on the sentence's first-layer input."""
    return saturation_curve(get_trace(model_name, text).hidden_ltd[0])


# Worst case 2 × < 1 kB (a handful of timings).
@st.cache_data(max_entries=2, show_spinner="Timing the engine at 16 to 512 tokens (once)…")
def cost_points(model_name: str) -> tuple[tuple[CostPoint, ...], float, int, bool]:
    """One timed forward pass per length, the machine's 1-minute load average and core count,
    and whether BLAS was held to one thread. Time depends on the length, not the words, so this
    is measured once per server on the default sentence repeated.

    On a shared 2-core machine, multi-threaded BLAS waits on busy cores and a 16-token pass
    measured 20 ms one moment and 700 ms the next; one thread keeps the growth with n readable.
    """
    model = get_model(model_name)
    if threadpool_limits is None:
        points = measure_cost(model, DEFAULT_SENTENCE)
    else:
        with threadpool_limits(limits=1, user_api="blas"):
            points = measure_cost(model, DEFAULT_SENTENCE)
    return points, os.getloadavg()[0], os.cpu_count() or 1, threadpool_limits is not None


# Worst case 8 × 4.7 MB (64-token source and target, every layer's patterns) = 38 MB.
@st.cache_data(max_entries=8, show_spinner="Running the decoder demonstration…")
def decoder(model_name: str, source: str, target: str, layer: int) -> DecoderTrace:
    """Masked self-attention on ``target`` and cross-attention into ``source``, with the
    borrowed weights of ``layer``; both texts cut to ``DECODER_MAX_TOKENS``."""
    model = get_model(model_name)
    src = tokenize(model, source, DECODER_MAX_TOKENS)
    tgt = tokenize(model, target, DECODER_MAX_TOKENS)
    return run_decoder(model, src, tgt, layer)


# Worst case 4 × 24 MB (layer 0's 12 × 512² scores and patterns, pickled) = 96 MB.
@st.cache_data(max_entries=4)
def padding(model_name: str, text: str) -> tuple[tuple[str, ...], Padding]:
    """Layer 0 on the sentence plus up to ``N_PAD`` [PAD] tokens, without and with the padding
    mask: the padded tokens and the demonstration's numbers."""
    model = get_model(model_name)
    trace = get_trace(model_name, text)
    n_pad = min(N_PAD, model.config.n_positions - trace.n_tokens)
    return (*trace.tokens.tokens, *["[PAD]"] * n_pad), padding_demo(model, trace, n_pad)


# Worst case 2 × < 1 kB.
@st.cache_data(max_entries=2, show_spinner="Timing attention and the dense layers (once)…")
def split_points(model_name: str) -> tuple[SplitPoint, ...]:
    """One layer's time split between attention and the dense layers at 16 to 512 tokens,
    with the matrix library held to one thread (see ``cost_points``)."""
    model = get_model(model_name)
    if threadpool_limits is None:
        return measure_split(model)
    with threadpool_limits(limits=1, user_api="blas"):
        return measure_split(model)
