"""Step: why scores are divided by √d_k: the spread of a dot product, and a saturated softmax."""

from __future__ import annotations

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attention_core import attention_steps, cell_arithmetic, row_entropy_bits
from attention_core.core.family import Trace
from attention_core.lessons.saturation import (
    ScaleEffect,
    dot_spread,
    random_scale_effect,
    scale_effect,
)
from ui import explore, glossary
from ui.router import Shared
from ui.tour import cache
from ui.tour.common import LAYER_HEAD, chart, engineers, say, token
from viz.dk_saturation import make_dk_saturation

TITLE = "Scaling the scores by √d_k"
PAGE = "build_head"  # the page that explores this step further (ui.registry)


def text(d_ks: tuple[int, ...], stds: NDArray[np.float64]) -> str:
    measured = ", ".join(
        f"{s:.1f} at d_k = {d} (√{d} = {np.sqrt(d):.1f})" for d, s in zip(d_ks, stds, strict=True)
    )
    scaled = ", ".join(f"{s / np.sqrt(d):.2f}" for d, s in zip(d_ks, stds, strict=True))
    return (
        "A dot product adds up d_k products. If the query's and key's numbers are random with "
        "spread 1, the sum is as often negative as positive, so its average stays near 0; what "
        "grows with d_k is its spread: the standard deviation grows like √d_k. Measured on "
        f"random vectors: {measured}. Divided by √d_k, these spreads become {scaled}: about 1 "
        "whatever the width. Without the division, widely spread scores make softmax saturate: "
        "one weight near 1, the rest near 0. A saturated softmax hardly changes when its inputs "
        "move a little (its gradient vanishes), so in training almost no signal would flow "
        "back through a saturated row to W_Q and W_K, and the head would learn slowly."
    )


def render(shared: Shared, trace: Trace) -> None:
    layer, head, e = shared.layer, shared.head, trace.config.d_head
    d_ks = (1, e, trace.config.d_model)
    glossary.say(text(d_ks, dot_spread(d_ks)[1]))
    i = token(shared, trace)
    explore.shared_only(
        trace,
        shared.model,
        shared.text,
        "learn_scaled",
        stages=("scores", "scaled"),
        controls=LAYER_HEAD,
    )
    glossary.note(
        "How to read this: rows are queries, columns keys. Left the raw dot products, right the "
        f"same divided by √{e} ≈ {np.sqrt(e):.2f}: same shape, smaller range."
    )
    steps = attention_steps(trace.scores_lhqk[layer, head], e)
    j = int(np.argmax(steps.pattern[i]))
    cell = cell_arithmetic(trace.q_lhqe[layer, head], trace.k_lhke[layer, head], steps, i, j)
    st.latex(
        rf"s_{{{i},{j}}} = q_{{{i}}} \cdot k_{{{j}}} = {cell.score:.3f},\qquad "
        rf"\frac{{s_{{{i},{j}}}}}{{\sqrt{{{e}}}}} = \frac{{{cell.score:.3f}}}{{{np.sqrt(e):.3f}}}"
        rf" = {cell.scaled:.3f}"
    )
    glossary.say(f"Query: {say(i, trace)}; key: {say(j, trace)}, the one it weights most.")
    _this_head(trace, layer, head)
    _saturation(shared, trace)
    with engineers():
        st.markdown(
            "Gradient size: the Frobenius norm of softmax's Jacobian diag(a) − a·aᵀ at softmax's "
            "own input (the scaled scores with the division, the raw ones without), per row, "
            "averaged (`attention_core.lessons.saturation.scale_effect`). With the division, the "
            "gradient with respect to the raw scores is that Jacobian ÷ √d_k "
            "(`ScaleEffect.grad_to_scores`; tests/app/test_tour_scaling.py checks it against "
            "torch.autograd). Spread: "
            "`scores.std(axis=-1)`. Random widths: `attention_core.lessons.saturation.dot_spread` "
            "(4,096 "
            "pairs each); random heads: `attention_core.lessons.saturation.random_scores` "
            "(unit-length "
            "token vectors, N(0, 1) weights, seeds 0–7), `saturation.random_scale_effect`."
        )


def head_text(eff: ScaleEffect, layer: int, head: int, e: int) -> str:
    more = "larger" if eff.grad_to_scores > eff.grad_raw else "smaller"
    return (
        f"**What-if on this head** (layer {layer}, head {head}): MiniLM was trained with the "
        "division, so switching it off shows what the division does, not how the model runs. "
        f"On your sentence the scores of a row spread by **{eff.spread_raw:.3f}** (standard "
        f"deviation, mean over rows); divided by √{e}, by **{eff.spread_scaled:.3f}**. "
        f"Without the division a row's largest weight averages **{eff.top_raw:.3f}** instead of "
        f"**{eff.top_scaled:.3f}**. Softmax's gradient at its own input (how much its weights "
        f"move when its inputs move a little) averages **{eff.grad_raw:.3f}** per row without "
        f"the division and **{eff.grad_scaled:.3f}** with it.\n\n"
        "What reaches the dot products q·k, and through them W_Q and W_K, is that same "
        f"**{eff.grad_raw:.3f}** without the division; with it, the division also multiplies "
        f"the gradient by 1/√{e}: **{eff.grad_scaled:.3f}** ÷ {np.sqrt(e):.2f} = "
        f"**{eff.grad_to_scores:.3f}**, {more} than without. A constant factor like 1/√{e} is "
        "not what the division is for (training's step size can make up for a constant); it "
        "is for the rows that saturate, whose gradient is near 0 whatever multiplies it."
    )


def _this_head(trace: Trace, layer: int, head: int) -> None:
    """The sidebar's head with and without ÷√d_k: spread, gradient, entropy, largest weight."""
    e, scores = trace.config.d_head, trace.scores_lhqk[layer, head]
    steps, raw = attention_steps(scores, e), attention_steps(scores, e, scale=False)
    eff = scale_effect(scores, e)
    glossary.say(head_text(eff, layer, head, e))
    c = st.columns(4)
    glossary.metric(
        "mean row entropy, ÷√d_k (bits)",
        f"{row_entropy_bits(steps.pattern).mean():.3f}",
        where=c[0],
    )
    glossary.metric(
        "… without scaling (bits)", f"{row_entropy_bits(raw.pattern).mean():.3f}", where=c[1]
    )
    glossary.metric("mean largest weight, ÷√d_k", f"{eff.top_scaled:.3f}", where=c[2])
    glossary.metric("… without scaling", f"{eff.top_raw:.3f}", where=c[3])
    glossary.note(
        f"An even spread over {trace.n_tokens} tokens would be {np.log2(trace.n_tokens):.3f} bits."
    )


def experiment_text(eff: ScaleEffect, d_k: int) -> str:
    """What the random heads of width ``d_k`` show, read off their numbers."""
    saturates = eff.top_raw > eff.top_scaled and eff.grad_raw < eff.grad_scaled
    return (
        f"At d_k = {d_k}, on your sentence's tokens: the scores of a row spread by "
        f"**{eff.spread_raw:.3f}**, and by **{eff.spread_scaled:.3f}** divided by √{d_k}. "
        f"Without the division a row's largest weight averages **{eff.top_raw:.3f}** and "
        f"softmax's gradient at its own input **{eff.grad_raw:.3f}**; with it, "
        f"**{eff.top_scaled:.3f}** and **{eff.grad_scaled:.3f}**. "
        + (
            "So without the division the rows pile onto one key and softmax's gradient shrinks."
            if saturates
            else "On this sentence the difference is small."
        )
    )


def _saturation(shared: Shared, trace: Trace) -> None:
    """Random heads of growing width on the reader's tokens, with and without ÷√d_k."""
    e = trace.config.d_head
    glossary.say(
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
    glossary.say(
        experiment_text(random_scale_effect(trace.hidden_ltd[0], sat.d_ks[-1]), sat.d_ks[-1])
    )
    st.latex(
        rf"d_k = {sat.d_ks[-1]}:\quad \overline{{\max_j a_{{ij}}}} = {sat.max_scaled[-1]:.3f}"
        rf"\ \text{{(scaled)}}\quad\text{{vs}}\quad {sat.max_unscaled[-1]:.3f}"
        rf"\ \text{{(unscaled)}}"
    )
