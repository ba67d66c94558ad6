"""The text pages' cached computations, each a thin st.cache_* wrapper over one engine call: probe
words run through the model (Embedding shift, What did that word do?, Start here, the notes), the
pass with a word hidden, every head's role scores (All heads, the pattern page, the tour), the
induction probe (the tour) and Build your own head's block. The models and traces they read are
ui.cache's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attention_core import WhatIf
from attention_core.core.pieces import show_piece
from attention_core.lessons import block as lesson_block
from attention_core.lessons.block import (
    BlockConfig,
    BlockView,
    make_block_weights,
    unit_variance,
    view_block,
)
from attention_core.lessons.fallback import fallback_embeddings
from attention_core.lessons.saturation import Saturation, saturation_curve
from attention_core.methods.geometry import embed_words, parse_probes
from attention_core.methods.hide_word import WordEffect, compare_passes
from attention_core.methods.induction import N_KNOCK, knock_probe, run_probe
from attention_core.methods.pack import trace_roles
from attention_core.methods.roles import HeadRole, RoleScores, name_heads
from ui.cache import as_encoder, get_model, get_trace

# Build your own head's block reads at most this many tokens: its heads' patterns go to the
# browser whole (12 heads of 2,048² scores would be 200 MB), and its cache entries stay bounded.
BLOCK_TOKENS = 512


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


# Worst case 32 × ~3 kB (seven [30, 9] float64 arrays at most) = 96 kB.
@st.cache_data(max_entries=32, show_spinner="Measuring what every head does…")
def head_roles(model: str, text: str) -> RoleScores:
    """Every head's role scores on the sentence's own pass (``methods.roles``), scored once per
    trace (``pack.trace_roles``: the explorer's header reads the same)."""
    return trace_roles(get_trace(model, text))


def head_names(model: str, text: str) -> list[list[HeadRole]]:
    """Every head named by ``methods.roles.RULE`` on the sentence: [layer][head]."""
    return name_heads(head_roles(model, text))


@dataclass(frozen=True)
class ProbeView:
    """What the tour shows of the induction probe (``methods.induction``): random tokens read
    twice, the heads that score highest for induction, and (a model that predicts the next
    token) the loss with and without those heads. Only these arrays, not the passes."""

    ids: NDArray[np.int64]  # [2n] the probe's token ids (the same n twice)
    tokens: tuple[str, ...]  # [2n] those tokens' byte-level pieces as text ("▁river")
    top: tuple[tuple[int, int, float], ...]  # (layer, head, induction score), highest first
    pattern_qk: NDArray[np.float32]  # [2n, 2n] the top head's pattern over the probe's tokens
    loss: NDArray[np.float64] | None  # [2n] −log p of each token (NaN at 0); None: no LM head
    knocked: NDArray[np.float64] | None  # [2n] the same with the ``top`` heads knocked out
    n_heads: int  # every head of the model (layers × heads)

    @property
    def n(self) -> int:
        return len(self.ids) // 2


# Worst case 2 × ~45 kB (one 100 × 100 float32 pattern, two 100-token losses) = 90 kB.
@st.cache_data(max_entries=2, show_spinner="Reading random tokens twice…")
def probe_view(model: str) -> ProbeView:
    """The induction probe on ``model`` (50 seeded random tokens, twice) and, for a model that
    predicts the next token, the what-if with its ``N_KNOCK`` top induction heads knocked out."""
    loaded = get_model(model)
    probe = run_probe(loaded)
    heads = probe.top_heads(N_KNOCK)
    span = slice(probe.start, probe.start + len(probe.ids))
    layer, head = heads[0]
    pattern_qk = np.asarray(probe.trace.pattern_lhqk[layer][head])[span, span]
    knocked = knock_probe(loaded, probe).loss if probe.loss is not None else None
    return ProbeView(
        ids=probe.ids,
        tokens=tuple(show_piece(loaded.tokenizer.id_to_token(int(i))) for i in probe.ids),
        top=tuple((lay, h, float(probe.induction_lh[lay, h])) for lay, h in heads),
        pattern_qk=np.array(pattern_qk, dtype=np.float32),
        loss=probe.loss,
        knocked=knocked,
        n_heads=loaded.config.n_layers * loaded.config.n_heads,
    )


# Worst case 16 × 0.75 MB (512 tokens × 384 float32 and their strings) = 12 MB.
@st.cache_data(max_entries=16, show_spinner=False)
def block_input(
    model: str, text: str, hide_special: bool, use_model: bool
) -> tuple[tuple[str, ...], NDArray[np.float32]]:
    """Build your own head's input: the model's word embeddings of the tokens on show, or, when
    the model cannot load, the hashed fallback; at unit variance per dimension."""
    if use_model:
        tokens, x_td = lesson_block.block_input(get_trace(model, text), hide_special)
        if len(tokens) > BLOCK_TOKENS:  # a long text's first ones, at unit variance again
            return tokens[:BLOCK_TOKENS], unit_variance(x_td[:BLOCK_TOKENS])
        return tokens, x_td
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
    pretrained = as_encoder(get_model(model)) if cfg.source == "pretrained" else None
    return view_block(x_td, cfg, make_block_weights(cfg, x_td.shape[1], pretrained))


# Worst case 16 × ~2 kB (a few curves over ~10 values of d_k) = 32 kB.
@st.cache_data(max_entries=16, show_spinner="Measuring softmax saturation…")
def block_saturation(
    model: str, text: str, hide_special: bool, use_model: bool, seeds: tuple[int, ...]
) -> Saturation:
    """The d_k curve of random heads over Build your own head's input, per (text, seeds)."""
    return saturation_curve(block_input(model, text, hide_special, use_model)[1], seeds=seeds)
