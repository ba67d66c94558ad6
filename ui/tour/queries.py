"""Step: queries and keys, with one query number recomputed from the layer's input and weights."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core import ModelConfig
from attention_core.core.family import Trace
from attention_core.lessons.demos import query_from_weights
from ui import glossary
from ui.cache import as_encoder, get_model
from ui.router import Shared
from ui.tour.common import chart, engineers, say, token, view
from viz.learn_matrix import make_small_matrix

TITLE = "Queries and keys"
PAGE = "pattern"  # the page that explores this step further (ui.registry)
SHOWN_DIMS = 8  # query/key dimensions drawn


def text(cfg: ModelConfig) -> str:
    return (
        f"Each head turns every token's vector E into two short vectors of {cfg.d_head} numbers. "
        "The query q = E·W_Q + b_Q is what the token is looking for; the key k = E·W_K + b_K is "
        "what it offers to others. Both matrices were learned in training, and every head has "
        "its own pair, so each head asks its own kind of question. E is the token's vector "
        "entering the layer: hidden state 0 (the embedding) for layer 0, the output of layer "
        "l − 1 for layer l."
    )


def render(shared: Shared, trace: Trace) -> None:
    cfg = trace.config
    glossary.say(text(cfg))
    layer, head, e, d = shared.layer, shared.head, cfg.d_head, cfg.d_model
    i = token(shared, trace)
    keep, tokens = view(shared, trace)
    cols = [f"e{j}" for j in range(SHOWN_DIMS)]
    for col, name, arr in zip(st.columns(2), ("Q", "K"), (trace.q_lhqe, trace.k_lhke), strict=True):
        fig = make_small_matrix(
            arr[layer, head][keep, :SHOWN_DIMS],
            tokens,
            cols,
            title=f"{name}: first {SHOWN_DIMS} of {e} (layer {layer}, head {head})",
        )
        caption = (
            f"How to read this: one row per token, the first {SHOWN_DIMS} of the head's {e} "
            f"{'query' if name == 'Q' else 'key'} numbers."
        )
        chart(fig, f"learn_{name.lower()}", caption, col)
    glossary.say(
        f"All {trace.n_tokens} tokens at once: each token's {d} numbers go in, this head's "
        f"{e} query numbers come out, the same weights for every token."
    )
    model = as_encoder(get_model(shared.model))
    rec = query_from_weights(model, layer, head, trace.hidden_ltd[layer, i])
    x, w0 = rec.x_d, rec.w_de[:, 0]
    terms = " + ".join(f"({x[j]:.3f})({w0[j]:.3f})" for j in range(2))
    st.latex(
        rf"q_{{{i},0}} = \sum_{{d=0}}^{{{d - 1}}} E_{{{i},d}}\,W^Q_{{d,0}} + b^Q_0 = "
        rf"{terms} + \dots + ({rec.b_e[0]:.3f}) = {rec.q_e[0]:.3f}"
    )
    glossary.say(
        f"Recomputed here for {say(i, trace)} from the vector entering layer {layer} and the "
        f"head's weights: q = **{rec.q_e[0]:.3f}**, the number the model's own forward pass "
        "holds in that cell."
    )
    gap = float(np.abs(rec.q_e - trace.q_lhqe[layer, head, i]).max())
    with engineers():
        st.markdown(
            f"Shapes: Q = E·W_Q + b_Q is [{trace.n_tokens} × {d}] · [{d} × {e}] → "
            f"[{trace.n_tokens} × {e}]. "
            f"`attention_core.lessons.demos.query_from_weights(model, {layer}, {head}, "
            f"trace.hidden_ltd[{layer}, {i}])` against `trace.q_lhqe[{layer}, {head}, {i}]`: "
            f"largest difference over the {e} numbers **{gap:.1e}** (float32 rounding). The "
            f"weights are `model.params.layer({layer}).w_q_hde[{head}]` (the checkpoint's "
            f"`encoder.layer.{layer}.attention.self.query.weight`, rows "
            f"{head * e}–{head * e + e - 1}, transposed)."
        )
