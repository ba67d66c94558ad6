"""The cached computations of Beyond the weights and the tour's "A weight is not an effect":
thin wrappers over engine calls, as in ui/cache.py. Knocked-out runs are traces, kept by the
trace store (``get_trace`` with ``WhatIf(knocked=...)``); the importance sweeps, which report
their progress as they run, are kept in a small store of their own."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, cast

import streamlit as st

from attention_core import LlamaTrace, WhatIf, trace_nbytes
from attention_core.methods.knockout import (
    Heads,
    Importance,
    PredictionChange,
    VectorChange,
    head_importance,
    prediction_change,
    vector_change,
)
from attention_core.methods.logit_lens import LogitLens, logit_lens
from attention_core.methods.weight_effect import WeightEffect, head_effect, largest_gap
from server.budget import reserved
from ui.cache import get_model, get_trace, trace_store

N_SWEEPS = 32  # importance sweeps kept (each a few kB: one float per head)


def knocked_trace(model: str, text: str, heads: Heads) -> Any:
    """The pass over ``text`` with ``heads`` knocked out, from the trace store."""
    return get_trace(model, text, WhatIf(knocked=heads))


def _decoder_trace(model: str, text: str) -> LlamaTrace:
    """The sentence's pass on a decoder (the store types every trace as the encoder's)."""
    return cast(LlamaTrace, get_trace(model, text))


# Worst case 64 × < 1 kB (a few numbers).
@st.cache_data(max_entries=64, show_spinner=False)
def sink_of(model: str, text: str, layer: int, head: int) -> WeightEffect:
    """The key that gets most of one head's weight, with its share of what the head moves."""
    return head_effect(get_trace(model, text), layer, head)


# Worst case 64 × < 1 kB.
@st.cache_data(max_entries=64, show_spinner=False)
def largest_sink(model: str, text: str) -> WeightEffect:
    """The sentence's head and key where the weight most exceeds what is moved."""
    return largest_gap(get_trace(model, text))


# Worst case 64 × ~1 kB (two top-10 lists).
@st.cache_data(max_entries=64, show_spinner="Running the sentence without those heads…")
def prediction(model: str, text: str, heads: Heads, position: int) -> PredictionChange:
    """A decoder's next-token prediction after ``position``, with and without ``heads``."""
    before = _decoder_trace(model, text)
    return prediction_change(before, knocked_trace(model, text, heads), position)


# Worst case 64 × ~1 kB (a few numbers per layer).
@st.cache_data(max_entries=64, show_spinner="Running the sentence without those heads…")
def vector(model: str, text: str, heads: Heads, token: int) -> VectorChange:
    """An encoder's token vector per layer and its sentence embedding, with and without
    ``heads``."""
    return vector_change(get_trace(model, text), knocked_trace(model, text, heads), token)


# Worst case 16 × ~20 kB (30 layers × 16 positions × 5 ids and probabilities).
@st.cache_data(max_entries=16, show_spinner="Reading the prediction after every layer…")
def lens(model: str, text: str, positions: tuple[int, ...]) -> LogitLens:
    """The logit lens of the sentence at ``positions``."""
    return logit_lens(_decoder_trace(model, text), positions)


class _Sweeps:
    """The last ``N_SWEEPS`` importance sweeps by (model, text, position), shared by all
    sessions; each computed outside any st.cache_* so that it may draw its progress."""

    def __init__(self) -> None:
        self._done: OrderedDict[tuple[str, str, int], Importance] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str, int]) -> Importance | None:
        with self._lock:
            if key in self._done:
                self._done.move_to_end(key)
            return self._done.get(key)

    def put(self, key: tuple[str, str, int], result: Importance) -> None:
        with self._lock:
            self._done[key] = result
            while len(self._done) > N_SWEEPS:
                self._done.popitem(last=False)


# One entry (no arguments): the store, bounded by N_SWEEPS × a few kB.
@st.cache_resource(max_entries=1, show_spinner=False)
def _sweeps() -> _Sweeps:
    return _Sweeps()


def importance_done(model: str, text: str, position: int) -> Importance | None:
    """The sweep of (model, text, position) if some session has run it, else None."""
    return _sweeps().get((model, text, position))


def importance(
    model: str, text: str, position: int, progress: Callable[[int, int], None]
) -> Importance:
    """Every head knocked out alone, its effect at ``position`` (kept for every session);
    ``progress(done, total)`` is told as the layers are done. A pass's bytes are held in the
    memory budget while it runs (``server.budget.Busy`` when there is no room)."""
    found = importance_done(model, text, position)
    if found is not None:
        return found
    trace = get_trace(model, text)
    read = position + 1 if trace.config.causal else trace.n_tokens  # a decoder reads up to it
    with reserved(trace_store(), trace_nbytes(trace.config, read)):  # one knocked pass at a time
        result = head_importance(get_model(model), trace, position, progress)
    _sweeps().put((model, text, position), result)
    return result
