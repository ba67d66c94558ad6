"""Step: values, the weighted sum z, and the update ΔE a layer adds to a token."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core import ModelConfig, cosine, largest_terms, output_bias, value_update
from attention_core.core.family import Trace
from ui import glossary
from ui.cache import get_model
from ui.router import Shared
from ui.tour.common import chart, engineers, say, token, view
from viz.learn_strip import make_embedding_strip
from viz.value_update import make_value_update

TITLE = "Values and the update ΔE"
PAGE = "values"  # the page that explores this step further (ui.registry)


def text(cfg: ModelConfig) -> str:
    return (
        "The weights only say where to look; the value vectors say what is passed along. Each "
        "token also gets a value V = E·W_V + b_V. The chosen token's output is the weighted sum "
        f"z = Σ_j a_j V_j, which this head's slice of W_O maps back to {cfg.d_model} numbers: "
        "its proposed change. The layer adds all its heads' proposals and a bias into one "
        "update ΔE, and E + ΔE is the token's vector nudged by its context. Not the last word "
        "yet: a LayerNorm rescales that sum, the block's feed-forward network adds its own "
        "change, and a second LayerNorm gives the vector the next layer reads."
    )


def render(shared: Shared, trace: Trace) -> None:
    cfg = trace.config
    glossary.say(text(cfg))
    layer, head = shared.layer, shared.head
    i = token(shared, trace)
    keep, tokens = view(shared, trace)
    up = value_update(trace, output_bias(get_model(shared.model), layer), layer, head, i)
    where = np.flatnonzero(keep == i)
    fig = make_value_update(
        up.weights_k[keep], up.v_norms_k[keep], tokens, int(where[0]) if where.size else None
    )
    chart(
        fig,
        "learn_values",
        "How to read this: the weight the chosen token (orange) gives each key in this head: "
        "the a_j of the weighted sum.",
    )
    terms = " + ".join(rf"{up.weights_k[j]:.3f}\,V_{{{j}}}" for j in largest_terms(up.weights_k, 3))
    st.latex(
        rf"z_{{{i}}} = \sum_j a_{{{i},j}} V_j = {terms} + \dots,\qquad "
        rf"\|z_{{{i}}}\| = {np.linalg.norm(up.z_e):.3f}"
    )
    st.latex(
        rf"\Delta E_{{{i}}} = \sum_{{h=0}}^{{{cfg.n_heads - 1}}} z^{{(h)}}_{{{i}}}"
        rf" W_O^{{(h)}} + b_O,\qquad \|\Delta E_{{{i}}}\| = {np.linalg.norm(up.delta_d):.3f}"
    )
    st.latex(
        rf"E_{{{i}}} + \Delta E_{{{i}}}:\quad \|E_{{{i}}}\| = "
        rf"{np.linalg.norm(up.hidden_d):.3f} \to \|E_{{{i}}} + \Delta E_{{{i}}}\| = "
        rf"{np.linalg.norm(up.updated_d):.3f},\quad "
        rf"\cos(E_{{{i}}}, E_{{{i}}} + \Delta E_{{{i}}}) = "
        rf"{float(cosine(up.hidden_d, up.updated_d)):.3f}"
    )
    glossary.say(f"For {say(i, trace)} in layer {layer}, head {head}.")
    strips = np.stack([up.hidden_d, up.delta_d, up.updated_d])
    chart(
        make_embedding_strip(strips, ["E", "ΔE", "E + ΔE"], token_axis=False, height=220),
        "learn_value_strips",
        "How to read this: the token's vector entering the layer (E), the update from all "
        "heads (ΔE), and their sum (E + ΔE), dimension by dimension, on one colour scale.",
    )
    gap = float(np.abs(up.z_e - trace.z_lhqe[layer, head, i]).max())
    with engineers():
        st.markdown(
            f"`value_update(trace, b_O, {layer}, {head}, {i})` recomputes z from "
            f"`trace.pattern_lhqk` and `trace.v_lhke`; it differs from the forward pass's "
            f"`trace.z_lhqe[{layer}, {head}, {i}]` by at most **{gap:.1e}**. ΔE is "
            f"`trace.delta_ltd[{layer}, {i}]`."
        )
