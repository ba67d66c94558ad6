"""Step: why scores are divided by √d_k: the spread of a dot product, and a saturated softmax."""

from __future__ import annotations

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attention_core import Trace, attention_steps, cell_arithmetic, row_entropy_bits
from attention_core.demos import dot_spread, scale_effect
from ui import cache, explore
from ui.router import Shared
from ui.tour.common import LAYER_HEAD, chart, engineers, say, token
from viz.dk_saturation import make_dk_saturation

TITLE = "Scaling the scores by √d_k"
PAGE = "build_head"  # the page that explores this step further (ui.registry)


def text(d_ks: tuple[int, ...], stds: NDArray[np.float64]) -> str:
    measured = ", ".join(
        f"{s:.1f} at d_k = {d} (√{d} = {np.sqrt(d):.1f})" for d, s in zip(d_ks, stds, strict=True)
    )
    return (
        "A dot product adds up d_k products. If the query's and key's numbers are random with "
        "spread 1, the sum is as often negative as positive, so its average stays near 0; what "
        "grows with d_k is its spread: the standard deviation grows like √d_k. Measured on "
        f"random vectors: {measured}. Widely spread scores make softmax pick one winner (a "
        "weight near 1, the rest near 0). Dividing by √d_k brings the spread back to about 1 "
        "whatever the width. It matters most in training: a softmax stuck at 0 and 1 changes "
        "almost not at all when its scores move, so it passes almost no gradient back to W_Q "
        "and W_K, and the head stops learning."
    )


def render(shared: Shared, trace: Trace) -> None:
    layer, head, e = shared.layer, shared.head, trace.config.d_head
    d_ks = (1, e, trace.config.d_model)
    st.markdown(text(d_ks, dot_spread(d_ks)[1]))
    i = token(shared, trace)
    explore.shared_only(
        trace,
        shared.model,
        shared.text,
        "learn_scaled",
        stages=("scores", "scaled"),
        controls=LAYER_HEAD,
    )
    st.caption(
        "How to read this: rows are queries, columns keys. Left the raw dot products, right the "
        f"same divided by √{e} ≈ {np.sqrt(e):.2f}: same shape, smaller range."
    )
    steps = attention_steps(trace.scores_lhqk[layer, head], e)
    j = int(np.argmax(steps.pattern[i]))
    cell = cell_arithmetic(trace.q_lhqe[layer, head], trace.k_lhke[layer, head], steps, i, j)
    st.latex(
        rf"s_{{{i},{j}}} = q_{{{i}}} \cdot k_{{{j}}} = {cell.score:.4f},\qquad "
        rf"\frac{{s_{{{i},{j}}}}}{{\sqrt{{{e}}}}} = \frac{{{cell.score:.4f}}}{{{np.sqrt(e):.4f}}}"
        rf" = {cell.scaled:.4f}"
    )
    st.markdown(f"Query: {say(i, trace)}; key: {say(j, trace)}, the one it weights most.")
    _this_head(trace, layer, head)
    _saturation(shared, trace)
    with engineers():
        st.markdown(
            "Gradient size: the Frobenius norm of softmax's Jacobian diag(a) − a·aᵀ per row, "
            "averaged (`attention_core.demos.scale_effect`); spread: `scores.std(axis=-1)`. "
            "Random widths: `attention_core.demos.dot_spread` (4,096 pairs each)."
        )


def _this_head(trace: Trace, layer: int, head: int) -> None:
    """The sidebar's head with and without ÷√d_k: spread, gradient, entropy, largest weight."""
    e, scores = trace.config.d_head, trace.scores_lhqk[layer, head]
    steps, raw = attention_steps(scores, e), attention_steps(scores, e, scale=False)
    eff = scale_effect(scores, e)
    st.markdown(
        f"**This head on your sentence** (layer {layer}, head {head}): the scores of a row "
        f"spread by **{eff.spread_raw:.2f}** (standard deviation, mean over rows); divided by "
        f"√{e} by **{eff.spread_scaled:.2f}**. The size of softmax's gradient (how much the "
        f"weights move when the scores move) is **{eff.grad_scaled:.3f}** per row with the "
        f"division and **{eff.grad_raw:.3f}** without it."
    )
    c = st.columns(4)
    c[0].metric("mean row entropy, ÷√d_k (bits)", f"{row_entropy_bits(steps.pattern).mean():.3f}")
    c[1].metric("… without scaling (bits)", f"{row_entropy_bits(raw.pattern).mean():.3f}")
    c[2].metric("mean largest weight, ÷√d_k", f"{eff.top_scaled:.3f}")
    c[3].metric("… without scaling", f"{eff.top_raw:.3f}")
    st.caption(
        f"An even spread over {trace.n_tokens} tokens would be {np.log2(trace.n_tokens):.3f} bits."
    )


def _saturation(shared: Shared, trace: Trace) -> None:
    """Random heads of growing width on the reader's tokens, with and without ÷√d_k."""
    e = trace.config.d_head
    st.markdown(
        "The effect grows with the width d_k. Below, random heads (queries and keys with spread "
        "1, so q·k has spread √d_k) are run on your sentence's tokens for widths 1 to "
        f"{trace.config.d_model}."
    )
    sat = cache.layer_saturation(shared.model, shared.text)
    chart(
        make_dk_saturation(sat, current_d_k=e),
        "learn_saturation",
        "How to read this: left, how spread out each row's weights are (entropy; the dotted "
        "line is an even spread); right, the largest weight in a row. Without scaling (dashed) "
        "the rows collapse onto a single key as d_k grows; with it they keep their shape.",
    )
    st.latex(
        rf"d_k = {sat.d_ks[-1]}:\quad \overline{{\max_j a_{{ij}}}} = {sat.max_scaled[-1]:.3f}"
        rf"\ \text{{(scaled)}}\quad\text{{vs}}\quad {sat.max_unscaled[-1]:.3f}"
        rf"\ \text{{(unscaled)}}"
    )
