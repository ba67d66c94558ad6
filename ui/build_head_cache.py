"""Cached data of the Build-your-own-head page: the block's input, its run, the d_k curve.

The input is the model's static word embeddings (``Trace.word_td``) of the tokens on show, or,
when the model cannot load, ``attention_core.fallback_embeddings``; each vector is rescaled to
unit variance per dimension (length √d), the size a real layer's LayerNormed input has and the
size the random weights (std 1/√d) are drawn for. Results are small (the
largest, 12 patterns of 512 × 512, is 12 MB), so st.cache_data may copy them on each rerun.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attention_core import (
    BlockConfig,
    Saturation,
    fallback_embeddings,
    make_block_weights,
    run_block,
    saturation_curve,
)
from attention_core.saturation import unit_rows
from ui.cache import get_model, get_trace


@dataclass(frozen=True)
class BlockView:
    """What the page draws of one block run, in the chosen and the other head combination."""

    scores_hqk: NDArray[np.float32]  # every head's raw Q·Kᵀ (the browser applies the switches)
    pattern_hqk: NDArray[np.float32]  # every head's softmax pattern
    head_norm_ht: NDArray[np.float32]  # ‖ΔE_h‖ per head and token
    delta_norm_t: NDArray[np.float32]  # ‖ΔE‖ of the combined update per token
    combine_gap: float  # max |ΔE(sum of proposals) − ΔE(concat then W_O)| over all entries
    delta_max: float  # max |ΔE| entry, for scale


# Worst case 16 × 0.75 MB (512 tokens × 384 float32 and their strings) = 12 MB.
@st.cache_data(max_entries=16, show_spinner=False)
def block_input(
    model: str, text: str, hide_special: bool, use_model: bool
) -> tuple[tuple[str, ...], NDArray[np.float32]]:
    """Tokens and their input embeddings [t, d] at unit variance per dimension: the model's word
    embeddings of the visible tokens (all of them if hiding [CLS]/[SEP] would leave none), or
    the hashed fallback."""
    if use_model:
        trace = get_trace(model, text)
        keep = (
            np.flatnonzero(~trace.tokens.special_t) if hide_special else np.arange(trace.n_tokens)
        )
        if keep.size == 0:
            keep = np.arange(trace.n_tokens)
        tokens, x_td = tuple(trace.tokens.tokens[i] for i in keep), trace.word_td[keep]
    else:
        tokens, x_td = fallback_embeddings(text)
    return tokens, (unit_rows(x_td) * np.sqrt(x_td.shape[1])).astype(np.float32)


# Worst case 4 × 24 MB (12 heads × 512² float32 scores and patterns, pickled) = 96 MB; every
# slider move is a new entry, so few are kept.
@st.cache_data(max_entries=4, show_spinner="Running your block…")
def block_view(
    model: str, text: str, hide_special: bool, use_model: bool, cfg: BlockConfig
) -> BlockView:
    """Run the block both ways (sum of per-head ΔE and concat → W_O) and keep what is drawn."""
    _, x_td = block_input(model, text, hide_special, use_model)
    weights = make_block_weights(
        cfg, x_td.shape[1], get_model(model) if cfg.source == "pretrained" else None
    )
    other = "concat" if cfg.combine == "sum" else "sum"
    shown = run_block(x_td, cfg, weights)
    alt = run_block(x_td, replace(cfg, combine=other), weights)
    return BlockView(
        scores_hqk=shown.scores_hqk,
        pattern_hqk=shown.pattern_hqk,
        head_norm_ht=np.linalg.norm(shown.head_delta_htd, axis=-1),
        delta_norm_t=np.linalg.norm(shown.delta_td, axis=-1),
        combine_gap=float(np.abs(shown.delta_td - alt.delta_td).max()),
        delta_max=float(np.abs(shown.delta_td).max()),
    )


# Worst case 16 × ~2 kB (a few curves over ~10 values of d_k) = 32 kB.
@st.cache_data(max_entries=16, show_spinner="Measuring softmax saturation…")
def saturation(
    model: str, text: str, hide_special: bool, use_model: bool, seeds: tuple[int, ...]
) -> Saturation:
    """The d_k curve of random heads over this sentence's input, per (text, seeds)."""
    _, x_td = block_input(model, text, hide_special, use_model)
    return saturation_curve(x_td, seeds=seeds)
