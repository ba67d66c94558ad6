"""Step: softmax turns each row of scores into weights; it ignores a constant shift."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attention_core import ModelConfig, attention_steps, cell_arithmetic
from attention_core.core.family import Trace
from attention_core.lessons.demos import shift_gap
from attention_core.lessons.tour_numbers import TopKeys, top_keys
from ui import explore, glossary, safe
from ui.router import Shared
from ui.tour.common import LAYER_HEAD, THREE, engineers, say, token, view

TITLE = "Softmax: who looks at whom"
PAGE = "pattern"  # the page that explores this step further (ui.registry)
SHIFT = 10.0  # the constant added to a row to show that softmax ignores it


def text(cfg: ModelConfig) -> str:
    return (
        "Softmax turns each row of scores into weights: raise e to each score, then divide by "
        "the row's total, so every weight is positive and each row sums to 1. Read a row as the "
        "answer to “what does this word look at?”. It is like a database SELECT that, instead "
        "of returning the one matching record, returns a blend of all records weighted by how "
        "well they match. Only the differences between a row's scores matter: adding the same "
        "number to every score of a row multiplies every e^x by the same factor, which the "
        "division cancels. So the formula may subtract the row's largest score first (keeping "
        "e^x from overflowing) without changing a single weight. In this model each score is "
        f"divided by √d_k = √{cfg.d_head} ≈ {np.sqrt(cfg.d_head):.2f} before softmax; the next "
        "step shows why."
    )


def _top_table(top: TopKeys, names: Sequence[str], keep: NDArray[np.int64]) -> None:
    """Each query's three largest weights and its row's sum, for the tokens on show."""
    table: dict[str, list[str] | list[float]] = {"query": [f"{q}: {names[q]}" for q in keep]}
    for rank, label in enumerate(("1st", "2nd", "3rd")):
        table[label] = [f"{top.keys_qr[q, rank]}: {names[top.keys_qr[q, rank]]}" for q in keep]
        table[f"share {rank + 1}"] = [float(top.share_qr[q, rank]) for q in keep]
    table["row sum"] = [float(top.row_sum_q[q]) for q in keep]
    st.dataframe(
        table,
        key="learn_top3",
        hide_index=True,
        column_config={"share 1": THREE, "share 2": THREE, "share 3": THREE, "row sum": THREE},
    )
    glossary.note("For each query: its three largest weights and the row's sum (1).")


def render(shared: Shared, trace: Trace) -> None:
    glossary.say(text(trace.config))
    layer, head, e = shared.layer, shared.head, trace.config.d_head
    i = token(shared, trace)
    keep = view(shared, trace)[0]
    steps = attention_steps(trace.scores_lhqk[layer, head], e)
    explore.shared_only(
        trace, shared.model, shared.text, "learn_pattern", stages=("pattern",), controls=LAYER_HEAD
    )
    glossary.note(
        "How to read this: row i is where token i looks; the brighter the cell, the larger its "
        "share of the row's total of 1."
    )
    names = trace.tokens.tokens
    top = top_keys(steps.pattern)
    _top_table(top, names, keep)
    j = int(top.keys_qr[i, 0])
    cell = cell_arithmetic(trace.q_lhqe[layer, head], trace.k_lhke[layer, head], steps, i, j)
    st.latex(
        rf"a_{{{i},{j}}} = \frac{{e^{{{cell.scaled:.3f} - {cell.row_max:.3f}}}}}"
        rf"{{\sum_k e^{{x_{{{i},k}} - {cell.row_max:.3f}}}}} = "
        rf"\frac{{{np.exp(cell.scaled - cell.row_max):.3f}}}{{{cell.row_exp_sum:.3f}}} = "
        rf"{cell.share:.3f},\qquad \sum_k a_{{{i},k}} = {top.row_sum_q[i]:.3f}"
    )
    shares = ", ".join(
        f"{safe.token(names[k])} {share:.1%}"
        for k, share in zip(top.keys_qr[i], top.share_qr[i], strict=True)
    )
    glossary.say(f"As a query, {say(i, trace)} selects a blend of: {shares}, …")
    gap = shift_gap(steps.scaled[i], SHIFT)
    st.latex(
        rf"\frac{{e^{{x_j + c}}}}{{\sum_k e^{{x_k + c}}}} = \frac{{e^c\,e^{{x_j}}}}"
        rf"{{e^c \sum_k e^{{x_k}}}} = \frac{{e^{{x_j}}}}{{\sum_k e^{{x_k}}}}:\quad "
        rf"c = {SHIFT:g} \Rightarrow \max_j |\Delta a_{{{i},j}}| = {gap:.3f}"
    )
    with engineers():
        st.markdown(
            f"`attention_steps(trace.scores_lhqk[{layer}, {head}], {e}).pattern` (the same as "
            f"`trace.pattern_lhqk[{layer}, {head}]`); the shift check is "
            f"`attention_core.lessons.demos.shift_gap(row, {SHIFT:g})` = {gap:.1e}."
        )
