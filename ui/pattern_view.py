"""The Attention pattern page's fragment: the explorer and the pattern as numbers. Defined here, not
in pages/pattern.py, so that the page's namespace (and the trace it names) dies with each run
(ui/callbacks.py says why)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from attention_core import Trace, attention_steps
from attention_core.pack import visible_tokens
from ui import downloads, explore, params, router
from ui.cache import get_trace
from viz.pattern_heatmap import STAGE_TITLES

TABLE_MAX = 64  # a bigger table is only built and sent when asked for
KEY = "pattern_explorer"


@st.fragment
def view_and_numbers(shared: router.Shared) -> None:
    """The explorer and the number table. A fragment: when the browser reports a new view, only
    this reruns (the explorer's data is the same, so nothing is redrawn); the sidebar names the
    layer and head instead of drawing sliders. It takes the sentence, not its trace, and looks
    the trace up in the shared store, so it never pins a trace the store has let go."""
    trace = get_trace(shared.model, shared.text)
    explore.full(trace, shared.model, shared.text, KEY)
    # Built only while open: a closed expander's table would still be computed, sent and laid
    # out on every rerun, and its grid's script loaded (1.2 MB) on the page's first visit.
    numbers = st.expander("The pattern as numbers", key="pattern_numbers", on_change="rerun")
    if numbers.open:
        with numbers:
            numbers_section(trace, st.session_state["layer"], st.session_state["head"])
    params.write_url("pattern")  # a fragment rerun skips the router, which keeps the URL


def numbers_section(trace: Trace, layer: int, head: int) -> None:
    """The softmax pattern under the session's switches as a table, and every stage as files."""
    steps = attention_steps(
        trace.scores_lhqk[layer, head],
        trace.config.d_head,
        scale=st.session_state["scale"],
        temperature=st.session_state["temp"],
        causal=st.session_state["causal"],
    )
    keep = visible_tokens(trace.tokens.special_t, st.session_state["hide_special"])
    cells = np.ix_(keep, keep)
    names = [f"{i}:{trace.tokens.tokens[i]}" for i in keep]  # unique, even repeated
    st.caption(f"Layer {layer}, head {head}: rows are queries, columns are keys.")
    if len(keep) <= TABLE_MAX or st.toggle(
        f"Show the {len(keep)}×{len(keep)} table", key="pattern_big_table"
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
        downloads.npz_button(trace, key="pattern_npz")
