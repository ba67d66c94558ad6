"""The Inside a decoder page's sections that take more than a few lines: the notes' word table
beside the real model's, and the rotary curves beside MiniLM's learned positions. Each reads the
engine's numbers and puts them on screen; the rules and measures live in the engine."""

from __future__ import annotations

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attention_core import LlamaTrace, Trace
from attention_core.core.positions import (
    cosine_sum,
    head_distance,
    position_similarity,
    rope_frequencies,
)
from attention_core.methods.decoder_heads import (
    NOTE_PHRASE,
    NOTE_TABLE_QK,
    NOTE_WORDS,
    RULES,
    HeadPick,
    first_token_share,
    note_tables,
    pick_head,
)
from attention_core.models.llama.tokenizer import show_piece
from ui import safe, show
from ui.cache import get_model, get_trace
from viz.rotary import make_distance_curves
from viz.word_table import make_word_table

MODEL = "smollm2"  # the decoder pages' model (ui.registry: what the sidebar shows there)
MAX_DISTANCE = 128  # distances drawn in the position curves
QUANTIZED = (  # said on both decoder pages: what "the model's own numbers" are of
    "Its weights ship 4-bit quantized (Q4_1): every number here is that model's, the same file "
    "the tests run through transformers."
)


def piece(token_id: int) -> str:
    """One vocabulary entry of the decoder as the app shows tokens ("▁Paris")."""
    return show_piece(get_model(MODEL).tokenizer.id_to_token(int(token_id)))


def note_table(model_key: str) -> None:
    """The notes' invented head next to the real decoder's, on a head chosen by a stated rule."""
    trace = get_trace(model_key, NOTE_PHRASE)
    tables = note_tables(trace)
    rule = st.radio(
        "Which head to show",
        list(RULES),
        key="dec_rule",
        horizontal=True,
        format_func=lambda r: {
            "closest": "closest to the notes",
            "adjective": "“plumbing” → “quantum”",
        }[r],
    )
    pick = pick_head(tables, rule)
    mask = np.triu(np.ones((3, 3), bool), 1)
    left, right = st.columns(2)
    show.plot(
        make_word_table(
            tables[pick.layer, pick.head],
            NOTE_WORDS,
            masked_qk=mask,
            title=f"SmolLM2, layer {pick.layer}, head {pick.head}",
        ),
        "dec_note_model",
        where=left,
    )
    show.plot(
        make_word_table(NOTE_TABLE_QK, NOTE_WORDS, masked_qk=mask, title="the notes' made-up head"),
        "dec_note_own",
        where=right,
    )
    _explain(trace, tables, pick)


def _explain(trace: Trace | LlamaTrace, tables: NDArray[np.float64], pick: HeadPick) -> None:
    """The rule, the pooling, and where the real head differs from the notes, in numbers."""
    tokens = trace.tokens.tokens
    plumbing = len(tokens) - 1
    sink_lh = np.stack(
        [first_token_share(trace.pattern_lhqk[i], plumbing) for i in range(trace.config.n_layers)]
    )
    col = tables[pick.layer, pick.head, 2]
    measured = "total difference" if pick.rule == "closest" else "weight"
    st.caption(
        f"Rule: the head {RULES[pick.rule]}. This one: {measured} {pick.value:.3f}. The model "
        f"reads the phrase as {len(tokens)} tokens ({' · '.join(tokens)}); a word's row is the "
        "mean of its pieces' rows and its column the sum of its pieces' columns, so each query's "
        "weights still sum to 1. The cells marked “masked” are the mask: a word never sees the "
        "words after it, in the notes and in the model."
    )
    share = sink_lh[pick.layer, pick.head]
    note = ", ".join(f"{w:g}" for w in NOTE_TABLE_QK[2])
    st.markdown(
        f"In this head “plumbing” gives **{col[0]:.3f}** to “dirty”, **{col[1]:.3f}** to "
        f"“quantum” and **{col[2]:.3f}** to itself; the notes say {note}. Where it "
        f"differs: “dirty” holds the first token, “{safe.md(tokens[0])}”, where a decoder's heads "
        "park weight when they find nothing to look for (an “attention sink”): here the last "
        f"piece of “plumbing” puts **{share:.3f}** of its weight on it. Over all {sink_lh.size} "
        f"heads the median is **{np.median(sink_lh):.3f}**, and more than half in "
        f"**{int((sink_lh > 0.5).sum())}** heads. So a large number in the “dirty” row need not "
        "mean the head reads the adjective; the notes' head is an illustration, not a measured one."
    )


def positions(trace: Trace | LlamaTrace, layer: int, head: int) -> None:
    """Rotary score against distance for one head, and both models' position similarities."""
    cfg = trace.config
    freqs = rope_frequencies(cfg.d_head, cfg.rope_theta)
    curve = head_distance(trace.q_lhqe[layer, head], trace.k_lhke[layer, head], freqs, MAX_DISTANCE)
    minilm = get_model("minilm")
    learned = position_similarity(minilm.params.embeddings.position_pd, MAX_DISTANCE)
    left, right = st.columns(2)
    fig = make_distance_curves(
        curve.distances,
        {
            "SmolLM2 rotary: mean cos(Δ·θ) over its bands": cosine_sum(curve.distances, freqs),
            "MiniLM learned: cos(P_i, P_i+Δ), mean over i": learned.mean,
        },
        bands={"MiniLM learned: cos(P_i, P_i+Δ), mean over i": (learned.low, learned.high)},
        y_title="similarity (1 = same position)",
        title="Position alone",
    )
    far = cosine_sum(np.array([MAX_DISTANCE]), freqs)[0]
    show.plot(
        fig,
        "dec_pos_both",
        where=left,
        caption=(
            f"Rotary (SmolLM2): a query and a key that are the same vector, equally strong in "
            f"each of its {freqs.size} frequency bands θ_i = {cfg.rope_theta:,.0f}^(−2i/"
            f"{cfg.d_head}), score {far:.3f} of their Δ = 0 score at Δ = {MAX_DISTANCE}: the "
            "fast bands turn away within a few tokens, the slow ones hardly move. "
            f"Learned (MiniLM): the cosine of position vectors i and i + Δ from its own table; the "
            "band spans the smallest to largest over i."
        ),
    )
    fig = make_distance_curves(
        curve.distances,
        {f"layer {layer}, head {head}": curve.mean_score},
        y_title="score q·R(Δ)k / √d",
        title="This head, on your sentence",
    )
    show.plot(
        fig,
        "dec_pos_head",
        where=right,
        caption=(
            "The sentence's average query (before rotation) against its average key, placed Δ "
            "tokens apart: on average over all query–key pairs, how the score changes with "
            "distance alone. The same two vectors, rotated, give this whole curve."
        ),
    )
