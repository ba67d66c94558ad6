"""Inside a decoder (pages/decoder.py): SmolLM2's own causal mask, the notes' word table beside the
real model's (the notes page shows it too), the rotary curves beside MiniLM's learned positions,
the query heads that share a key and value, and the next-token guesses. Each reads the engine's
numbers and puts them on screen; the rules and measures live in the engine."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pandas as pd
import streamlit as st
from numpy.typing import NDArray

from attention_core import LlamaTrace, ModelConfig
from attention_core.core.family import Trace as TextTrace
from attention_core.core.pieces import show_piece
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
    group_similarity,
    note_tables,
    pick_head,
)
from ui import glossary, router, safe, show
from ui.cache import get_model, get_trace, model_error
from ui.state.text import Decoder
from viz.pattern_heatmap import make_pattern_heatmap
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
        key=Decoder.rule.key,
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


def _explain(trace: TextTrace, tables: NDArray[np.float64], pick: HeadPick) -> None:
    """The rule, the pooling, and where the real head differs from the notes, in numbers."""
    tokens = trace.tokens.tokens
    plumbing = len(tokens) - 1
    sink_lh = np.stack(
        [first_token_share(trace.pattern_lhqk[i], plumbing) for i in range(trace.config.n_layers)]
    )
    col = tables[pick.layer, pick.head, 2]
    measured = "total difference over the six cells" if pick.rule == "closest" else "weight"
    glossary.note(
        f"Rule: the head {RULES[pick.rule]}. This one: {measured} {pick.value:.3f}. The model "
        f"reads the phrase as {len(tokens)} tokens ({' · '.join(tokens)}); a word's row is the "
        "mean of its pieces' rows and its column the sum of its pieces' columns, so each query's "
        "weights still sum to 1. The cells marked “masked” are the mask: a word never sees the "
        "words after it, in the notes and in the model."
    )
    share = sink_lh[pick.layer, pick.head]
    note = ", ".join(f"{w:g}" for w in NOTE_TABLE_QK[2])
    apart = float(np.abs(np.asarray(col[:3]) - NOTE_TABLE_QK[2]).sum())
    glossary.say(
        f"In this head “plumbing” gives **{col[0]:.3f}** to “dirty”, **{col[1]:.3f}** to "
        f"“quantum” and **{col[2]:.3f}** to itself; the notes say {note} (a difference "
        f"of **{apart:.3f}** on this row). Mind that “dirty” holds the first token, "
        f"“{safe.md(tokens[0])}”, where many of a decoder's heads put weight whatever it says "
        "(an “attention sink”): here the last "
        f"piece of “plumbing” puts **{share:.3f}** of its weight on it. Over all {sink_lh.size} "
        f"heads the median is **{np.median(sink_lh):.3f}**, and more than half in "
        f"**{int((sink_lh > 0.5).sum())}** heads. So a large number in the “dirty” row need not "
        "mean the head reads the adjective; the notes' head is an illustration, not a measured one."
    )


def positions(trace: TextTrace, layer: int, head: int) -> None:
    """Rotated, not added: both models' position similarities, and one head's score against
    distance."""
    glossary.note(
        "MiniLM adds a learned position vector to each token. SmolLM2 adds nothing: it turns each "
        "query and key by an angle that grows with the position, so the position's part of a "
        "score depends on how far apart two tokens are, not where they stand (what the tokens "
        "say still counts too)."
    )
    _curves(trace, layer, head)


def _curves(trace: TextTrace, layer: int, head: int) -> None:
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


def require_models() -> ModelConfig:
    """SmolLM2's config (MiniLM is needed where the two compare), or a message and a stopped
    page when either cannot load."""
    if error := model_error(MODEL) or model_error("minilm"):
        st.error(f"A model could not be loaded. {error}")
        st.stop()
    return get_model(MODEL).config


def lead(cfg: ModelConfig) -> str:
    return (
        "This page is made for SmolLM2-135M-Instruct, a decoder, so the sidebar shows it here "
        f"(MiniLM appears where the two compare). Your sentence, the layer (of {cfg.n_layers}) "
        f"and the head (of {cfg.n_heads}) come from the sidebar. {QUANTIZED}"
    )


def require_trace(shared: router.Shared) -> LlamaTrace:
    """The decoder's pass over the sidebar's sentence, or a message and a stopped page."""
    if not shared.text.strip():
        glossary.box(
            "Type a sentence in the sidebar (or pick an example) to look inside the decoder."
        )
        st.stop()
    trace = cast(LlamaTrace, get_trace(MODEL, shared.text))  # the store types it as Trace
    if notice := router.cut_notice(trace):
        st.warning(notice)
    return trace


def masked(trace: LlamaTrace, layer: int, head: int) -> None:
    """The head's pattern: every weight above the diagonal is 0."""
    pattern = trace.pattern_lhqk[layer, head]
    show.plot(
        make_pattern_heatmap(
            pattern, list(trace.tokens.tokens), title=f"layer {layer}, head {head}"
        ),
        "dec_pattern",
    )
    glossary.note(
        f"Rows are queries, columns keys. Every weight above the diagonal is exactly "
        f"{np.triu(pattern, 1).max():g}: SmolLM2 was trained with this mask, because it learns to "
        "guess each next token and must not see it. MiniLM, an encoder, reads both ways; the "
        "causal switch on the Attention pattern page is a what-if it was never trained for."
    )


def groups(trace: LlamaTrace, layer: int) -> None:
    """Which query heads read each key/value head, and how much attention they share."""
    cfg = trace.config
    group = cfg.n_heads // cfg.n_kv_heads
    st.dataframe(
        {
            "key/value head": list(range(cfg.n_kv_heads)),
            "query heads reading it": [
                ", ".join(map(str, range(g * group, (g + 1) * group)))
                for g in range(cfg.n_kv_heads)
            ],
        },
        key="dec_groups",
        hide_index=True,
    )
    heads = [f"H{h}" for h in range(cfg.n_heads)]
    sim = group_similarity(trace.pattern_lhqk[layer], cfg.n_kv_heads)
    glossary.say(
        f"SmolLM2 has {cfg.n_heads} query heads but only {cfg.n_kv_heads} key/value heads: each "
        f"group of {group} asks its own questions (queries) of the same keys and takes the same "
        f"values, so the KV cache is {group}× smaller. In layer {layer} on your sentence, two "
        f"heads of one group share **{sim.within:.0%}** of their attention on average, two heads "
        f"of different groups **{sim.across:.0%}**."
    )
    st.dataframe(
        pd.DataFrame(sim.overlap_hh, index=heads, columns=heads),
        key="dec_overlap",
        column_config={f"H{h}": show.NUM for h in range(cfg.n_heads)},
    )
    glossary.note(
        "Attention in common, Σ min(p, p′) over the keys, averaged over the queries: row and "
        "column are heads H0…H8 (1 = the same pattern)."
    )


def guesses(trace: LlamaTrace) -> None:
    """The three likeliest next tokens after every position."""
    tokens = trace.tokens.tokens
    rows: dict[str, Any] = {"token": list(tokens), "actually next": [*tokens[1:], "—"]}
    for r in range(3):
        rows[f"guess {r + 1}"] = [piece(i) for i in trace.next_top_ids_tk[:, r]]
        rows[f"p{r + 1}"] = trace.next_top_probs_tk[:, r]
    st.dataframe(rows, key="dec_next", column_config={f"p{r}": show.NUM for r in (1, 2, 3)})
    glossary.note(
        "Each row: after reading up to this token (and only up to it), the model's three "
        "likeliest next tokens and their probabilities; compare with the token that follows."
    )


def engineers(trace: LlamaTrace, layer: int, head: int) -> None:
    cfg, pattern = trace.config, trace.pattern_lhqk[layer, head]
    with st.expander("For engineers"):
        st.code(
            f"{cfg.name}: {cfg.n_layers} layers, {cfg.n_heads} query heads, {cfg.n_kv_heads} KV "
            f"heads, d_head {cfg.d_head}, RoPE base {cfg.rope_theta:g}, {cfg.quantization} "
            f"weights\npattern {pattern.shape}, rows sum to 1 within "
            f"{np.abs(pattern.sum(1) - 1).max():.1e}\n"
            f"q (after RoPE) {trace.q_lhqe[layer].shape}, KV per group {trace.k_lgke[layer].shape}",
            language=None,
        )
