"""Step: a weight is not an effect. On the visitor's sentence, the head whose weights and
norm-weighted view disagree most, then the same head knocked out and what changed."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core.core.family import Trace
from attention_core.lessons.head_words import sink_sentence
from attention_core.methods.weight_effect import shares_hk
from ui import glossary, safe
from ui.beyond.cache import largest_sink, vector
from ui.router import Shared
from ui.text.cache import head_roles
from ui.tour.common import THREE, engineers, token

TITLE = "A weight is not an effect"
PAGE = "beyond"  # the page that explores this step further (ui.registry)
HINT = "knock out any heads, rank them all, follow the mixing through the layers"
N_ROWS = 5  # keys listed, the most weighted first
READ_MORE = (
    "Read more: Kobayashi et al. 2020, “Attention is not only a weight”; Michel et al. 2019, "
    "“Are sixteen heads really better than one?”."
)
TEXT = (
    "A weight says where a head looks. What the head hands on is each token's value vector, "
    "scaled by its weight and turned by the head's output matrix. If a token's value vector is "
    "short, a big weight on it moves almost nothing. A head can park most of its weight on "
    "[CLS] or [SEP], and the token it parks on may hand on a short vector. So multiply each "
    "weight by the length of what the token hands on, and compare."
)


def _shares(trace: Trace, layer: int, head: int, key: int) -> None:
    """The head's most weighted keys: their share of the weight and of what is moved."""
    weight_hk, moved_hk = shares_hk(trace.pattern_lhqk[layer], trace.value_norm_lhk[layer])
    order = np.argsort(-weight_hk[head], kind="stable")[:N_ROWS]
    names = trace.tokens.tokens
    st.dataframe(
        {
            "token": [f"{k}: {names[k]}" for k in order],
            "share of the weight": weight_hk[head, order],
            "share of what is moved": moved_hk[head, order],
        },
        key="learn_moved",
        hide_index=True,
        column_config={"share of the weight": THREE, "share of what is moved": THREE},
    )
    st.latex(
        r"\text{moved share}_j = \frac{\sum_i a_{ij}\,\lVert f(x_j)\rVert}"
        r"{\sum_{i,k} a_{ik}\,\lVert f(x_k)\rVert} = "
        rf"{moved_hk[head, key]:.3f}\quad\text{{while}}\quad"
        rf"\text{{weight share}}_j = \frac{{\sum_i a_{{ij}}}}{{\sum_{{i,k}} a_{{ik}}}} = "
        rf"{weight_hk[head, key]:.3f}"
    )


def render(shared: Shared, trace: Trace) -> None:
    sinks = sink_sentence(head_roles(shared.model, shared.text), trace.tokens.tokens)
    glossary.say(f"{TEXT} {safe.md(sinks)}")
    best = largest_sink(shared.model, shared.text)
    layer, head, key = best.layer, best.head, best.key
    where = f"layer {layer}, head {head}"
    glossary.say(
        f"On your sentence the weights and what is moved disagree most in **{where}**: "
        f"{safe.token(trace.tokens.tokens[key])} gets **{best.weight_share:.0%}** of the "
        f"head's weight but only **{best.moved_share:.0%}** of what the head moves."
    )
    _shares(trace, layer, head, key)
    glossary.note(
        "How to read this: shares summed over every token that attends; f(x_j) is what token j "
        "hands on (its value vector through the head's output matrix), so the second share "
        "weighs each weight by its length."
    )
    i = token(shared, trace)
    change = vector(shared.model, shared.text, ((layer, head),), i)
    final = change.cosine_l.size - 1
    glossary.say(
        f"Now a what-if: switch {where} off (its output replaced by zeros) and run the "
        f"sentence again. Token {i} {safe.token(trace.tokens.tokens[i])} after the last layer "
        f"has cosine **{change.cosine_l[final]:.3f}** with its usual vector (1 = unchanged"
        + (", to three decimals)." if f"{change.cosine_l[final]:.3f}" == "1.000" else ").")
    )
    left, right = st.columns(2)
    who = safe.token(trace.tokens.tokens[i])
    glossary.metric(f"Cosine of {who}, {where} off", f"{change.cosine_l[final]:.3f}", where=left)
    if change.sentence_cosine is not None:
        glossary.metric(
            f"Sentence embedding cosine, {where} off", f"{change.sentence_cosine:.3f}", where=right
        )
    glossary.note(READ_MORE)
    with engineers():
        st.markdown(
            f"`attention_core.methods.weight_effect.largest_gap(trace)` = {where}, key {key}; "
            "shares from "
            f"`shares_hk(trace.pattern_lhqk[{layer}], trace.value_norm_lhk[{layer}])`. The "
            f"knocked run is `trace_sentence(model, text, WhatIf(knocked=(({layer}, {head}),)))`, "
            f"compared by `knockout.vector_change(before, after, {i})`."
        )
