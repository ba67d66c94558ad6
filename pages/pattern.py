"""One head's attention, step by step: Q·Kᵀ → ÷√d_k → mask → softmax, with the arithmetic."""

import numpy as np
import pandas as pd
import streamlit as st
from numpy.typing import NDArray

from attention_core import AttentionSteps, Trace, attention_steps, cell_arithmetic
from ui import downloads, params, safe, sidebar
from ui.cache import get_trace
from ui.sidebar import Shared
from viz.pattern_heatmap import STAGE_TITLES, make_pattern_heatmap

shared = sidebar.shared()
sidebar.require_trace(shared)  # messages and a stop when there is nothing to show
st.title(f"Attention pattern · layer {shared.layer}, head {shared.head}")
st.caption(
    "Each token asks a question (its query) and every token offers an answer (its key). "
    "Their dot products are scaled, masked and turned by softmax into weights that sum to 1 "
    "across each row: how much the row's token draws from each column's token."
)

TABLE_MAX = 64  # a bigger table is only built and sent when asked for


@st.fragment
def cell_arithmetic_section(
    shared: Shared, steps: AttentionSteps, scale: bool, temp: float
) -> None:
    """One cell's arithmetic. A fragment inside ``stages``: picking a cell reruns only this."""
    trace, layer, head = get_trace(shared.model, shared.text), shared.layer, shared.head
    d_k = trace.config.d_head
    st.subheader("Where one number comes from")
    n = trace.n_tokens
    label = [f"{i}: {t}" for i, t in enumerate(trace.tokens.tokens)]
    for key, default in (("q", min(3, n - 1)), ("k", min(2, n - 1))):
        if st.session_state.get(key, 0) >= n:
            st.session_state[key] = default
    qc, kc = st.columns(2)
    query = qc.selectbox("Query token (row)", range(n), format_func=label.__getitem__, key="q")
    key_ = kc.selectbox("Key token (column)", range(n), format_func=label.__getitem__, key="k")
    q_tok, k_tok = (safe.token(trace.tokens.tokens[i]) for i in (query, key_))
    cell = cell_arithmetic(trace.q_lhqe[layer, head], trace.k_lhke[layer, head], steps, query, key_)
    terms = " + ".join(f"({p:.3f})" for p in cell.products_e[:4])
    st.markdown(
        f"**q·k** for {q_tok} → {k_tok}"
        f" = Σ over {d_k} dimensions of q_e·k_e = {safe.md(terms)} + … = **{cell.score:.4f}**  \n"
        f"**scaled** = {cell.score:.4f} ÷ {np.sqrt(d_k) if scale else 1:.3f}"
        + (f" ÷ {temp:g}" if temp != 1 else "")
        + f" = **{cell.scaled:.4f}**  \n"
        + (
            "**masked**: this key is hidden from this query, so its weight is exactly **0**."
            if cell.masked
            else f"**softmax share** = exp({cell.scaled:.4f} − {cell.row_max:.4f}) ÷ "
            f"{cell.row_exp_sum:.4f} = **{cell.share:.4f}**"
        )
    )
    params.write_url("pattern")  # a fragment rerun skips the router, which keeps the URL


def numbers_section(
    trace: Trace, steps: AttentionSteps, keep: NDArray[np.int64], layer: int, head: int
) -> None:
    """The softmax pattern as a table, and every stage (and the whole trace) as files."""
    tokens = [trace.tokens.tokens[i] for i in keep]
    view = np.ix_(keep, keep)
    names = [f"{i}:{t}" for i, t in zip(keep, tokens, strict=True)]  # unique, even repeated
    if len(keep) <= TABLE_MAX or st.toggle(
        f"Show the {len(keep)}×{len(keep)} table", key="pattern_big_table"
    ):
        st.dataframe(pd.DataFrame(steps.pattern[view], index=names, columns=names))
    cols = st.columns(5)
    for col, stage in zip(cols, STAGE_TITLES, strict=False):
        with col:
            downloads.csv_button(
                f"{stage}.csv", getattr(steps, stage)[view], names, names,
                f"L{layer}H{head}_{stage}.csv", key=f"pattern_csv_{stage}",
            )  # fmt: skip
    with cols[4]:
        downloads.npz_button(trace, key="pattern_npz")


@st.fragment
def stages(shared: Shared) -> None:
    """The page's own controls and everything they change. A fragment: flipping a switch or
    moving the temperature reruns only this part, not the sidebar and the page around it.
    Fragments take the sentence, not its trace, and look the trace up in the shared store (a
    lookup), so a session never pins a trace the store has let go."""
    trace, layer, head = get_trace(shared.model, shared.text), shared.layer, shared.head
    c1, c2, c3, c4 = st.columns(4)
    causal = c1.toggle("Causal mask", key="causal", help="Hide later tokens, as a decoder does.")
    scale = c2.toggle("Scale by √d_k", key="scale", help="Divide scores by √32 before softmax.")
    temp = c3.slider("Softmax temperature", 0.05, 5.0, key="temp", step=0.05)
    transpose = c4.toggle("Columns = queries", key="transpose", help="The 3Blue1Brown layout.")

    d_k = trace.config.d_head
    steps = attention_steps(
        trace.scores_lhqk[layer, head], d_k, scale=scale, temperature=temp, causal=causal
    )
    keep = shared.visible(trace)
    tokens = [trace.tokens.tokens[i] for i in keep]
    view = np.ix_(keep, keep)

    captions = {
        "scores": "Raw query·key dot products: large means the key answers the query's question "
        "(hover a cell for its value).",
        "scaled": f"Divided by √d_k = {np.sqrt(d_k):.2f}"
        + (f" and by temperature {temp:g}" if temp != 1 else "")
        + ", so the softmax is not pushed into picking a single key.",
        "masked": "Hidden cells (blank) are set to −∞ so softmax gives them exactly 0."
        if causal
        else "No mask is on: every token may look at every token.",
        "pattern": "Softmax of each row: the weights sum to 1"
        + (
            " (hidden [CLS]/[SEP] columns left out, so shown rows sum to less)."
            if shared.hide_special
            else "."
        ),
    }
    for row in (("scores", "scaled"), ("masked", "pattern")):
        for col, stage in zip(st.columns(2), row, strict=True):
            fig = make_pattern_heatmap(
                getattr(steps, stage)[view], tokens, stage=stage, transpose=transpose,
                numbers=stage == "pattern",  # the others on hover: 4 charts of labels redraw slowly
            )  # fmt: skip
            col.plotly_chart(fig, key=f"pattern_{stage}", config={"displaylogo": False})
            col.caption(captions[stage])

    cell_arithmetic_section(shared, steps, scale, temp)

    # Built only while open: a closed expander's table would still be computed, sent and laid out
    # on every rerun, and its grid's script loaded (1.2 MB) on the page's first visit.
    numbers = st.expander("The pattern as numbers", key="pattern_numbers", on_change="rerun")
    if numbers.open:
        with numbers:
            numbers_section(trace, steps, keep, layer, head)
    # The URL (temperature, switches, q, k) is written by cell_arithmetic_section, run above.


stages(shared)
