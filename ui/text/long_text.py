"""Long text (pages/long_text.py): SmolLM2 over a whole page of text, where each head puts its
weight (the first token's share, the reach back), along the text, and what the length costs.
Every sentence is built from the numbers on the same screen, each beside its yardstick (an even
spread over what a token can see); the measures live in ``attention_core.methods.reach``."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import numpy as np
import streamlit as st

from attention_core import LlamaTrace
from attention_core.methods.reach import TextReach, bin_tokens, text_reach
from ui import glossary, router, show
from ui.cache import get_trace, model_error
from ui.presets import PRESETS
from ui.state.entry import Entry, State
from ui.tour.common import engineers
from viz.head_measure_map import make_head_measure_map
from viz.reach_along_text import make_reach_along_text

MODEL = "smollm2"  # the page's model (ui.registry: what the sidebar shows there)
SHIPPED = Path(__file__).resolve().parents[2] / "examples" / "long_text.txt"
SOURCES = {"shipped": "the long text that comes with the app", "sidebar": "the sidebar's text"}
# The page opens on the sidebar's text when the visitor typed it (not an example), else on ours.
SINK_LINE = 0.5  # a head puts more than half its weight on the first token: it mostly sinks
NEAR, FAR = 0.25, 0.75  # reach below: reads near its token; above: reads far back
EVEN_REACH = 0.5  # an even spread over keys 0..q travels q / 2: reach 0.5
COST_LEAD = (
    "Every layer and head scores every pair of tokens: n² scores for n tokens. Double the text "
    "and that work takes four times as long, while the rest of the pass (each token's own "
    "matrix products) only doubles. Below, SmolLM2's whole forward pass is timed on this "
    "machine at growing lengths (the shipped text, repeated where it is too short: the time "
    "depends on the length, not the words) and fitted as a·n + b·n² + c."
)


class LongText(State):
    """Long text: which text it reads, and whether the visitor asked for the cost timings."""

    PAGE = "long_text"
    source = Entry("lt_source", "shipped")
    timed = Entry("lt_timed", False)


LONG_TEXT = LongText()


def shipped_text() -> str:
    return SHIPPED.read_text(encoding="utf-8")


def require_trace(shared: router.Shared) -> tuple[LlamaTrace, str]:
    """The text the visitor chose and SmolLM2's pass over it, or a message and a stopped page."""
    if error := model_error(MODEL):
        st.error(f"SmolLM2 could not be loaded. {error}")
        st.stop()
    if not LongText.source.is_set():  # first view: a text the visitor typed wins over ours
        LONG_TEXT.source = "sidebar" if shared.text.strip() not in ("", *PRESETS) else "shipped"
    source = st.radio(
        "Text to read",
        list(SOURCES),
        key=LongText.source.key,
        horizontal=True,
        format_func=SOURCES.__getitem__,
    )
    text = shipped_text() if source == "shipped" else shared.text
    if not text.strip():
        glossary.box("Type a text in the sidebar (or read the one that comes with the app).")
        st.stop()
    with st.spinner("SmolLM2 is reading the text…"):
        trace = cast(LlamaTrace, get_trace(MODEL, text))  # the store types it as Trace
    if trace.tokens.special_t.all():
        glossary.box(router.NOTHING_READABLE)
        st.stop()
    if notice := router.cut_notice(trace):  # where SmolLM2 stopped reading, as on every page
        glossary.box(notice, kind="warning")
    if trace.n_tokens < 2:
        glossary.box(
            "This text is a single token: it has no distance to read back. Read the text that "
            "comes with the app, or type a longer one."
        )
        st.stop()
    return trace, text


# Worst case 8 × ~60 kB (seven [30, 9] or [30, 9, bins] float64 arrays) = 0.5 MB.
@st.cache_data(max_entries=8, show_spinner="Measuring every head across the text…")
def reach_of(model: str, text: str) -> TextReach:
    """Every head's sink share and reach over the text, once per trace (one layer at a time)."""
    return text_reach(get_trace(model, text))


def lead(trace: LlamaTrace) -> str:
    cfg = trace.config
    return (
        f"SmolLM2 reads this text as **{trace.n_tokens:,} tokens**; each token can look at "
        f"itself and every token before it. Below, all {cfg.n_layers * cfg.n_heads} heads "
        f"({cfg.n_layers} layers × {cfg.n_heads} heads) are measured across the whole text."
    )


def first_token(trace: LlamaTrace, reach: TextReach) -> None:
    """The sink: each head's mean weight on the text's first token, against an even spread's."""
    even = reach.even_sink()
    glossary.say(
        f"Each cell: how much weight a head puts on the text's first token "
        f"(“{trace.tokens.tokens[0]}”), averaged over every token that looks. A head that spread "
        f"its weight evenly over what each token can see would put **{even:.3f}** there."
    )
    st.plotly_chart(
        make_head_measure_map(reach.sink_lh, "weight on the first token", even, "first token"),
        key="lt_sink_map",
    )
    sinks = reach.sink_lh > SINK_LINE
    layer, head = np.unravel_index(int(np.argmax(reach.sink_lh)), reach.sink_lh.shape)
    glossary.say(
        f"**{int(sinks.sum())} of {sinks.size} heads** put more than half their weight "
        f"(above {SINK_LINE}) on the first token: it works as an attention sink. The median "
        f"head puts **{np.median(reach.sink_lh):.2f}** there (an even spread: {even:.3f}); "
        f"the most, **{reach.sink_lh[layer, head]:.2f}**, is layer {layer}, head {head}."
        f"{_top_keys(trace, reach)}"
    )


def _top_keys(trace: LlamaTrace, reach: TextReach) -> str:
    """The heads whose most-weighted key (averaged over queries) is not the first token."""
    other = np.argwhere(reach.top_key_lh != 0)
    if not len(other):
        return (
            " In every head the single token that gets the most weight, averaged over the "
            "text, is the first one."
        )
    layer, head = max(other, key=lambda lh: reach.top_share_lh[lh[0], lh[1]])
    key = int(reach.top_key_lh[layer, head])
    return (
        f" In {len(other)} heads the token with the most weight is another one; the clearest: "
        f"layer {layer}, head {head} puts **{reach.top_share_lh[layer, head]:.2f}** on token "
        f"{key} (“{trace.tokens.tokens[key]}”)."
    )


def top_keys_table(trace: LlamaTrace, reach: TextReach, rows: int = 10) -> None:
    """The heads whose most-weighted token is not the first, clearest first."""
    other = np.argwhere(reach.top_key_lh != 0)
    if not len(other):
        return
    order = np.argsort(-reach.top_share_lh[other[:, 0], other[:, 1]])[:rows]
    picked = other[order]
    keys = reach.top_key_lh[picked[:, 0], picked[:, 1]]
    st.dataframe(
        {
            "layer": picked[:, 0],
            "head": picked[:, 1],
            "token position": keys,
            "token": [trace.tokens.tokens[int(k)] for k in keys],
            "its weight": reach.top_share_lh[picked[:, 0], picked[:, 1]],
            "weight on the first token": reach.sink_lh[picked[:, 0], picked[:, 1]],
        },
        key="lt_top_keys",
        hide_index=True,
        column_config={c: show.NUM for c in ("its weight", "weight on the first token")},
    )
    glossary.note(
        f"The {len(picked)} heads (of {len(other)}) whose most-weighted token is not the first, "
        "the clearest first; each weight is averaged over every token that looks."
    )


def how_far(reach: TextReach) -> None:
    """Each head's reach: the share of the distance available its weight travels back."""
    glossary.say(
        "Each cell: how far back a head reads. For every token, the distance of its weight "
        "(tokens back, weighted by the attention) is divided by the distance it could go (its "
        f"position), then averaged: **{EVEN_REACH}** is an even spread over what it can see, 0 "
        "reads only the token itself, 1 only the first token."
    )
    st.plotly_chart(
        make_head_measure_map(
            reach.reach_lh, "reach", EVEN_REACH, "reach", distance_lh=reach.distance_lh
        ),
        key="lt_reach_map",
    )
    near, far = reach.reach_lh < NEAR, reach.reach_lh > FAR
    far_not_sink = far & (reach.sink_lh <= SINK_LINE)
    glossary.say(
        f"**{int(near.sum())} heads** read near their token (reach below {NEAR}), "
        f"**{int(far.sum())}** read far back (above {FAR}), the rest in between. "
        + _far_words(reach, far, far_not_sink)
    )


def _far_words(reach: TextReach, far: np.ndarray, far_not_sink: np.ndarray) -> str:
    if not far.any():
        return ""
    if not far_not_sink.any():
        return (
            "Every far-reading head is also a sink (more than half its weight on the first "
            "token): its distance is mostly the way back to the start."
        )
    pick = np.where(far_not_sink, reach.reach_lh, -1.0)
    layer, head = np.unravel_index(int(np.argmax(pick)), pick.shape)
    return (
        f"{int(far.sum() - far_not_sink.sum())} of the far-reading heads are sinks; of the "
        f"others, layer {layer}, head {head} reads farthest: reach "
        f"**{reach.reach_lh[layer, head]:.2f}**, **{reach.distance_lh[layer, head]:.0f} "
        "tokens** back on average."
    )


def along(trace: LlamaTrace, reach: TextReach, layer: int, head: int) -> None:
    """Both measures per stretch of the text: every head's median, the sidebar's head."""
    if len(reach.bin_starts) < 2:
        glossary.box(
            f"The text fits in one stretch of {bin_tokens(reach.n_tokens)} tokens: read the text "
            "that comes with the app, or type a longer one, to see how the heads change along it."
        )
        return
    cfg = trace.config
    sink_hb = reach.sink_lhb.reshape(-1, len(reach.bin_starts))
    reach_hb = reach.reach_lhb.reshape(-1, len(reach.bin_starts))
    even_b = reach.even_sink_b()
    st.plotly_chart(
        make_reach_along_text(
            reach.bin_starts,
            reach.n_tokens,
            sink_hb,
            reach_hb,
            (
                f"layer {layer}, head {head}",
                reach.sink_lhb[layer, head],
                reach.reach_lhb[layer, head],
            ),
            even_b,
        ),
        key="lt_along",
    )
    median_sink, median_reach = np.nanmedian(sink_hb, 0), np.nanmedian(reach_hb, 0)
    last = f"{reach.bin_starts[-1]:,}–{reach.n_tokens - 1:,}"
    glossary.say(
        f"The text in stretches of {reach.bin_size or reach.n_tokens} tokens. From the first "
        f"stretch to the last ({last}), the median head's weight on the first token goes from "
        f"**{median_sink[0]:.2f}** to **{median_sink[-1]:.2f}**, while an even spread's falls "
        f"from {even_b[0]:.3f} to {even_b[-1]:.3f}: the farther a token is from the start, the "
        "less an even spread leaves there. The median reach goes from "
        f"**{median_reach[0]:.2f}** to **{median_reach[-1]:.2f}** (an even spread "
        f"stays at {EVEN_REACH}). The red line is the sidebar's head (of {cfg.n_heads} in each "
        f"of {cfg.n_layers} layers)."
    )


def engineers_note(trace: LlamaTrace, reach: TextReach) -> None:
    with engineers():
        st.code(
            f"attention_core.methods.reach.text_reach: {trace.config.n_layers} layers read one "
            f"at a time (trace.pattern_lhqk[l] is [{trace.config.n_heads}, {trace.n_tokens}, "
            f"{trace.n_tokens}]); bins of {reach.bin_size} queries\n"
            "sink_lh = mean_q p[q, 0]; distance = q − Σ_k p[q, k]·k; reach = mean over q ≥ 1 of "
            "distance / q\n"
            f"trace holds {trace.nbytes / 1e6:.1f} MB now (trace.nbytes)",
            language=None,
        )
