"""Every cached computation of the app, each a thin st.cache_* wrapper over one engine call: the
model, the traces (through the trace store, server/trace_store.py), and what single pages need.
Cached objects are shared by every session: a trace's arrays are read-only, so no page can
change what another visitor sees; st.cache_data copies the small results it hands out."""

from __future__ import annotations

import os
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from functools import partial
from typing import cast

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attention_core import (
    Model,
    ModelConfig,
    ModelLoadError,
    Trace,
    WhatIf,
    load_config,
    load_model,
    trace_nbytes,
    trace_sentence,
)
from attention_core.core.tokens import tokenize
from attention_core.lessons import block as lesson_block
from attention_core.lessons.block import (
    BlockConfig,
    BlockView,
    make_block_weights,
    unit_variance,
    view_block,
)
from attention_core.lessons.cost import CostPoint, measure_cost
from attention_core.lessons.demos import Padding, SplitPoint, measure_split, padding_demo
from attention_core.lessons.explain import summarize_heads
from attention_core.lessons.fallback import fallback_embeddings
from attention_core.lessons.head_order import head_metrics, sink_t
from attention_core.lessons.saturation import Saturation, saturation_curve
from attention_core.methods.geometry import embed_words, parse_probes
from attention_core.methods.hide_word import WordEffect, compare_passes
from attention_core.methods.telling import TellingHead, telling_head
from attention_core.models import MODELS as PACKAGED
from attention_core.models.registry import ALL_MODELS
from server.streamlit_private import Run, current_run
from server.trace_store import Superseded
from ui.cache_listen import whisper_config, whisper_error
from ui.presets import DEFAULT_SENTENCE
from ui.store import trace_store as trace_store  # the store (its own module: no import cycle)

try:
    from threadpoolctl import threadpool_limits
except ImportError:  # comes with scikit-learn (a sentence-transformers dependency); optional here
    threadpool_limits = None

N_PAD = 3  # [PAD] tokens appended in the padding example

# The models a visitor may choose: the URL's key (model=smollm2) -> what load_model reads (a
# packaged model's key, or a local path). Paths never come from the browser.
MODELS: dict[str, str | None] = {key: key for key in PACKAGED}
DEFAULT_MODEL = "minilm"
# What the sidebar's picker offers: the text models, then Whisper (its page is Listen).
PICKABLE: tuple[str, ...] = tuple(ALL_MODELS)
LABELS = {key: spec.display_name for key, spec in ALL_MODELS.items()}  # the picker's words


# One entry per model: worst case 90 MB (MiniLM's float32 weights) + 540 MB (SmolLM2's).
@st.cache_resource(max_entries=len(MODELS), show_spinner="Loading the model…")
def get_model(name: str) -> Model:
    """The loaded model; raises ModelLoadError (not cached) when it is missing or broken."""
    if name not in MODELS:
        raise ModelLoadError(f"Unknown model {name!r}; choose one of {', '.join(MODELS)}.")
    # Typed as the encoder's Model: the engine's page-facing calls are annotated for it, and a
    # LlamaModel answers the same ones (config, tokenize, trace_sentence); a Model | LlamaModel
    # union here is the typing the engine's signatures should grow into (read-only arrays: the
    # engine's loaders see to it).
    return cast(Model, load_model(MODELS[name]))


# One entry per server-side model: worst case len(MODELS) × ~1 kB (a config's fields).
@st.cache_resource(max_entries=len(MODELS), show_spinner=False)
def _config(name: str) -> ModelConfig:
    return load_config(MODELS[name])


def model_config(name: str = DEFAULT_MODEL) -> ModelConfig | None:
    """The model's config (its JSON only, no weights: cheap), None when it cannot be read. Layer,
    head and token bounds come from here, never typed. Whisper's are its decoder's, read from
    the loaded model (ui.cache_listen)."""
    if name == "whisper":
        return whisper_config()
    if name not in MODELS:
        return None
    try:
        return _config(name)
    except ModelLoadError:
        return None


def model_error(name: str) -> str | None:
    """None when the model loads, else the message explaining what is missing and how to fix it."""
    if name == "whisper":
        return whisper_error()
    try:
        get_model(name)
    except ModelLoadError as err:
        return str(err)
    return None


def get_trace(
    model_name: str, text: str, whatif: WhatIf = WhatIf(), page: Run | None = None
) -> Trace:
    """The forward pass of ``text``, shared and kept within the store's budget; dropped while it
    waits once its session (a script run's, or the explorer route's ``page``) wants another."""
    model = get_model(model_name)  # in the session's thread: the pass may run on the back lane

    def expected() -> int:
        return trace_nbytes(model.config, len(tokenize(model, text)))

    key, compute = (model_name, text, whatif), partial(trace_sentence, model, text, whatif)
    if (run := page or current_run()) is None:  # a test, the CLI: no session
        return trace_store().get(key, compute, expected=expected)
    try:  # wanted() turns False once the session's run must rerun or stop, or the page left
        return trace_store().get(key, compute, *run, expected)
    except Superseded:
        if page is not None:  # the explorer's route answers it (409)
            raise
        st.empty()  # a yield point: Streamlit raises its RerunException/StopException here
        return trace_store().get(key, compute, expected=expected)  # a rerun not preempting it


# Worst case 64 × < 1 kB (a few ints and floats).
@st.cache_data(max_entries=64, show_spinner=False)
def get_telling_head(model_name: str, text: str) -> TellingHead | None:
    """The sentence's most telling head (attention_core.methods.telling's rule), once per
    sentence."""
    return telling_head(get_trace(model_name, text))


# --- per-page computations: each a thin wrapper over one engine call ---------------------------


# Worst case 512 × 21.5 kB (7 × 384 float64) = 11 MB.
@st.cache_data(max_entries=512, show_spinner=False)
def _probe(model: str, word: str) -> NDArray[np.float64]:
    return embed_words(get_model(model), [word])[:, 0]  # [l,1,d] -> [l,d]


def _probe_vectors(
    model: str, words: Sequence[str]
) -> tuple[list[str], NDArray[np.float64], list[str]]:
    """The words the model could read, their vectors at every layer [l, p, d] (each word run
    alone through the model), and the words it could not (no word pieces at all)."""
    kept, vectors, unreadable = [], [], []
    for word in words:
        try:
            vectors.append(_probe(model, word))
            kept.append(word)
        except ValueError:
            unreadable.append(word)
    if not vectors:
        cfg = get_model(model).config
        return kept, np.zeros((cfg.n_layers + 1, 0, cfg.d_model)), unreadable
    return kept, np.stack(vectors, axis=1), unreadable  # p × [l,d] -> [l,p,d]


def read_probes(model: str, raw: str) -> tuple[list[str], NDArray[np.float64], list[str]]:
    """Probe words typed as one comma-separated text: the ones kept, their vectors [l, p, d], and
    the problems to tell the visitor (too many, too long, unreadable by the model)."""
    probes, problems = parse_probes(raw)
    kept, vectors_lpd, unreadable = _probe_vectors(model, probes)
    if unreadable:
        problems.append(f"Dropped {', '.join(unreadable)}: the model reads no word pieces in them.")
    return kept, vectors_lpd, problems


# Worst case 64 × ~10 kB (per-layer numbers; 7 × probes cosines) = 640 kB. The two passes come
# from the trace store (its byte budget and forward-pass slots), not from this cache.
@st.cache_data(max_entries=64, show_spinner="Running the sentence with the word hidden…")
def word_effect(
    model: str, text: str, word_positions: tuple[int, ...], token: int, probes: tuple[str, ...]
) -> WordEffect:
    """``compare_passes`` of the sentence's own pass (the one every page shares) and the pass
    with the word hidden; ``probes`` are words the model reads (as ``read_probes`` kept them)."""
    _, vectors_lpd, _ = _probe_vectors(model, probes)
    with_word = get_trace(model, text)
    without_word = get_trace(model, text, WhatIf(hidden=tuple(word_positions)))
    return compare_passes(with_word, without_word, token, vectors_lpd)


# Worst case 32 × ~4 kB (a few [6, 12] float arrays) = 128 kB.
@st.cache_data(max_entries=32, show_spinner=False)
def head_figures(model: str, text: str) -> dict[str, NDArray[np.float32]]:
    """Summary figures of every head by label, each [l, h], over the full pattern."""
    trace = get_trace(model, text)
    special = sink_t(trace.tokens.special_t, trace.config.causal)
    return head_metrics(summarize_heads(trace.pattern_lhqk, special), trace.config.causal)


# Worst case 16 × 0.75 MB (512 tokens × 384 float32 and their strings) = 12 MB.
@st.cache_data(max_entries=16, show_spinner=False)
def block_input(
    model: str, text: str, hide_special: bool, use_model: bool
) -> tuple[tuple[str, ...], NDArray[np.float32]]:
    """Build your own head's input: the model's word embeddings of the tokens on show, or, when
    the model cannot load, the hashed fallback; at unit variance per dimension."""
    if use_model:
        return lesson_block.block_input(get_trace(model, text), hide_special)
    tokens, x_td = fallback_embeddings(text)
    return tokens, unit_variance(x_td)


# Worst case 4 × 24 MB (12 heads × 512² float32 scores and patterns, pickled) = 96 MB; every
# slider move is a new entry, so few are kept.
@st.cache_data(max_entries=4, show_spinner="Running your block…")
def block_view(
    model: str, text: str, hide_special: bool, use_model: bool, cfg: BlockConfig
) -> BlockView:
    """One run of the experimental block on ``block_input``, with the combine check."""
    _, x_td = block_input(model, text, hide_special, use_model)
    pretrained = get_model(model) if cfg.source == "pretrained" else None
    return view_block(x_td, cfg, make_block_weights(cfg, x_td.shape[1], pretrained))


# Worst case 16 × ~2 kB (a few curves over ~10 values of d_k) = 32 kB.
@st.cache_data(max_entries=16, show_spinner="Measuring softmax saturation…")
def block_saturation(
    model: str, text: str, hide_special: bool, use_model: bool, seeds: tuple[int, ...]
) -> Saturation:
    """The d_k curve of random heads over Build your own head's input, per (text, seeds)."""
    return saturation_curve(block_input(model, text, hide_special, use_model)[1], seeds=seeds)


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
    return threadpool_limits(limits=1, user_api="blas")


# Worst case 2 × < 1 kB (a handful of timings).
@st.cache_data(max_entries=2, show_spinner="Timing the engine at 16 to 512 tokens (once)…")
def cost_points(model_name: str) -> tuple[tuple[CostPoint, ...], float, int, bool]:
    """One timed forward pass per length (measured once per server: the time depends on the
    length, not the words), the 1-minute load average, the core count, and whether BLAS was
    held to one thread."""
    with _one_blas_thread():
        points = measure_cost(get_model(model_name), DEFAULT_SENTENCE)
    return points, os.getloadavg()[0], os.cpu_count() or 1, threadpool_limits is not None


# Worst case 2 × < 1 kB.
@st.cache_data(max_entries=2, show_spinner="Timing attention and the dense layers (once)…")
def split_points(model_name: str) -> tuple[SplitPoint, ...]:
    """One layer's time split between attention and the dense layers at 16 to 512 tokens."""
    with _one_blas_thread():
        return measure_split(get_model(model_name))


# Worst case 4 × 24 MB (layer 0's 12 × 512² patterns with and without the mask, pickled) = 96 MB.
@st.cache_data(max_entries=4, show_spinner=False)
def padding(model_name: str, text: str) -> Padding:
    """Layer 0 on the sentence plus ``N_PAD`` [PAD] tokens, without and with the padding mask."""
    return padding_demo(get_model(model_name), get_trace(model_name, text), N_PAD)
