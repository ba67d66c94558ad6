"""Attention pattern (pages/pattern.py): what the view's switches are, the query and key cell kept
within the sentence, and the fragment holding the explorer, the head's job by the stated rule and
the pattern as numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from attention_core import ModelConfig, attention_steps
from attention_core.core.family import Trace
from attention_core.lessons.head_words import head_sentence
from attention_core.methods.pack import visible_tokens
from attention_core.methods.roles import RULE
from ui import downloads, explore, glossary, params, router
from ui.cache import get_trace
from ui.state.shared import FRAME
from ui.state.text import PATTERN, Pattern
from ui.text.cache import head_names, head_roles
from viz.pattern_heatmap import STAGE_TITLES

TABLE_MAX = 64  # a bigger table is only built and sent when asked for


def what_ifs(cfg: ModelConfig) -> str:
    """What the view's switches are (what-ifs, against what the model itself computes), and what
    temperature does, for the learner, on ``cfg``'s model."""
    own = (
        "applies its causal mask (it was trained with it: each token reads only itself and the "
        "tokens before it, so that switch stays on)"
        if cfg.causal
        else "applies no mask (it reads the sentence in both directions; it was never trained "
        "with the causal mask, so that switch shows a model it is not)"
    )
    return (
        "The view's switches for the mask, √d_k and temperature are **what-ifs**: they change "
        f"the arithmetic to show what each step does. {cfg.name} itself divides every score by "
        f"√d_k = √{cfg.d_head} = {cfg.d_head**0.5:.3f}, {own}, and runs at temperature 1. "
        "**Temperature** divides the scores before softmax: below 1 the pattern gets sharper "
        "(the largest weights grow), above 1 flatter (the weights even out). This is a what-if "
        "on the attention scores, not the temperature of text generation, which divides the "
        "next-token scores (the Generate page's)."
    )


def active_what_ifs(cfg: ModelConfig) -> list[str]:
    """The what-ifs the session's switches apply now, in plain words (empty: the model's own
    arithmetic)."""
    found = []
    if not PATTERN.scale:
        found.append("no division by √d_k")
    if PATTERN.temp != 1.0:
        found.append(f"temperature {PATTERN.temp:g}")
    if PATTERN.causal and not cfg.causal:
        found.append("the causal mask")
    return found


def keep_cell_in(trace: Trace) -> None:
    """The query and key cell within the sentence (a shorter one, or a link's, may point past
    it): else the fourth and third tokens, or the last."""
    n = trace.n_tokens
    if PATTERN.q >= n:
        PATTERN.q = min(3, n - 1)
    if PATTERN.k >= n:
        PATTERN.k = min(2, n - 1)


@st.fragment
def view_and_numbers(shared: router.Shared) -> None:
    """The explorer and the number table. A fragment: when the browser reports a new view, only
    this reruns (the explorer's data is the same, so nothing is redrawn); the sidebar names the
    layer and head instead of drawing sliders. It takes the sentence, not its trace, and looks
    the trace up in the shared store, so it never pins a trace the store has let go."""
    trace = get_trace(shared.model, shared.text)
    explore.full(trace, shared.model, shared.text, Pattern.explorer.key)
    head_job(shared, FRAME.layer, FRAME.head)
    # Built only while open: a closed expander's table would still be computed, sent and laid
    # out on every rerun, and its grid's script loaded (1.2 MB) on the page's first visit.
    numbers = st.expander("The pattern as numbers", key=Pattern.numbers.key, on_change="rerun")
    if numbers.open:
        with numbers:
            numbers_section(trace, FRAME.layer, FRAME.head, shared)
    params.write_url(Pattern.PAGE)  # a fragment rerun skips the router, which keeps the URL


def head_job(shared: router.Shared, layer: int, head: int) -> None:
    """The head's job by the stated rule on this sentence (``methods.roles``): its badge and
    what it does, in one line."""
    role = head_names(shared.model, shared.text)[layer][head]
    tokens = get_trace(shared.model, shared.text).tokens.tokens
    said = head_sentence(head_roles(shared.model, shared.text), layer, head, tokens)
    glossary.say(f"**What this head does** `{role.badge()}` {said}")
    glossary.note(
        f"By the rule on this sentence: {RULE.text()}. All heads shows every head's job at once."
    )


def numbers_section(trace: Trace, layer: int, head: int, shared: router.Shared) -> None:
    """The softmax pattern under the session's switches as a table, and every stage as files."""
    steps = attention_steps(
        trace.scores_lhqk[layer, head],
        trace.config.d_head,
        scale=PATTERN.scale,
        temperature=PATTERN.temp,
        causal=PATTERN.causal or trace.config.causal,  # a decoder's own mask
    )
    keep = visible_tokens(trace.tokens.special_t, FRAME.hide_special)
    cells = np.ix_(keep, keep)
    names = [f"{i}:{trace.tokens.tokens[i]}" for i in keep]  # unique, even repeated
    changed = active_what_ifs(trace.config)
    glossary.note(
        f"Layer {layer}, head {head}: rows are queries, columns are keys. "
        + (
            f"What-if: {', '.join(changed)}; the model's own weights differ."
            if changed
            else "The model's own weights (no what-if switched on)."
        )
    )
    if len(keep) <= TABLE_MAX or st.toggle(
        f"Show the {len(keep)}×{len(keep)} table", key=Pattern.big_table.key
    ):
        st.dataframe(pd.DataFrame(steps.pattern[cells], index=names, columns=names))
    cols = st.columns(5)
    for col, stage in zip(cols, STAGE_TITLES, strict=False):
        with col:
            downloads.csv_button(
                f"{stage}.csv",
                getattr(steps, stage)[cells],
                names,
                names,
                f"L{layer}H{head}_{stage}.csv",
                key=f"pattern_csv_{stage}",
            )
    with cols[4]:
        downloads.npz_button(trace, shared.model, shared.text, layer, key=Pattern.npz.key)
