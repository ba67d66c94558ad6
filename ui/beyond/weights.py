"""Beyond the weights, sections 1 and 2: the pattern beside the norm-weighted pattern, with the
sentence's attention-sink case measured, and the attention rollout with what it assumes. The
numbers come from attention_core.methods.weight_effect (through ui.beyond.cache); the explorer
draws."""

from __future__ import annotations

import streamlit as st

from attention_core.core.family import Trace
from attention_core.lessons.head_words import sink_sentence
from attention_core.methods.weight_effect import WeightEffect
from ui import explore, glossary, safe
from ui.beyond.cache import largest_sink, sink_of
from ui.router import Shared
from ui.state.beyond import Beyond
from ui.state.shared import FRAME
from ui.text.cache import head_roles

READ_MORE = (
    "Read more: Kobayashi et al. 2020, “Attention is not only a weight: analyzing transformers "
    "with vector norms” (the norm-weighted view); Abnar & Zuidema 2020, “Quantifying attention "
    "flow in transformers” (rollout); Michel et al. 2019, “Are sixteen heads really better than "
    "one?” (knocking heads out); nostalgebraist 2020, “interpreting GPT: the logit lens”."
)
ONE_LINE = (
    "A weight says where a head looks, not what it takes: each token hands over its value "
    "vector, and a big weight on a token whose value vector is short moves almost nothing."
)
ROLLOUT_ASSUMES = (
    "Rollout is an estimate, not a measurement. It assumes three things: every head of a layer "
    "counts the same (their weights are averaged), the shortcut that carries each token's own "
    "vector past the attention counts as exactly half, and the rest of each layer (the "
    "normalisation and the feed-forward network) is left out, as is how long each value vector "
    "is. Read it as a rough map of how the layers mix the tokens, not as ground truth."
)


def said(effect: WeightEffect, trace: Trace, lead: str = "In", mark: str = ",") -> str:
    """One sentence: the key's share of the head's weight and of what the head moves."""
    word = safe.token(trace.tokens.tokens[effect.key])
    head = f"{lead} layer {effect.layer}, head {effect.head}{mark}"
    weight, moved = effect.weight_share, effect.moved_share
    if moved < weight:
        return (
            f"{head} {word} gets **{weight:.0%}** of the weight but passes on only "
            f"**{moved:.0%}** of what the head moves."
        )
    return (
        f"{head} {word} gets the most weight, **{weight:.0%}**, and passes on **{moved:.0%}** "
        "of what the head moves: here weight and effect agree."
    )


def show_head(layer: int, head: int) -> None:
    """A button's callback: show ``layer``, ``head`` (the sidebar's, shared with every page)."""
    FRAME.layer, FRAME.head = layer, head


def norm_weighted(shared: Shared, trace: Trace) -> None:
    """Section 1: the weights and the norm-weighted view side by side, and the sink measured."""
    glossary.say(ONE_LINE)
    explore.shared_only(
        trace,
        shared.model,
        shared.text,
        "bey_weighted",
        stages=("pattern", "weighted"),
        controls=("layer", "head"),
    )
    glossary.note(
        "How to read this: on the left the weights (each row sums to 1), on the right the same "
        "weights times the length of what each token passes on (its value vector, through the "
        "head's output). Where the left is bright and the right dark, the head looks without "
        "taking anything. Click a cell for its numbers."
    )
    glossary.say(said(sink_of(shared.model, shared.text, shared.layer, shared.head), trace))
    best = largest_sink(shared.model, shared.text)
    if (best.layer, best.head) != (shared.layer, shared.head):
        glossary.say(said(best, trace, "The clearest case on this sentence is", ":"))
        st.button(
            f"Show layer {best.layer}, head {best.head}",
            key=Beyond.sink.key,
            on_click=show_head,
            args=(best.layer, best.head),
            icon=":material/visibility:",
        )
    sinks = sink_sentence(head_roles(shared.model, shared.text), trace.tokens.tokens)
    glossary.note(
        "Shares are summed over every attending token. A head can park weight on "
        + (
            "a token every sentence has, [CLS] or [SEP], "
            if trace.config.special_tokens
            else "the first token, whatever word it is, "
        )
        + f"whose value vector may be short: an “attention sink”. {safe.md(sinks)}"
    )


def rollout(shared: Shared, trace: Trace) -> None:
    """Section 2: the rollout of a layer, and what it assumes."""
    glossary.say(
        "Each layer mixes every token's vector with the others'. Rollout follows the weights "
        "through the layers: row i of layer l says how much token i's vector after layer l "
        "draws on each token of the input. Move the layer to watch the mixing grow."
    )
    explore.shared_only(
        trace,
        shared.model,
        shared.text,
        "bey_rollout",
        stages=("rollout",),
        controls=("layer",),
        tell=False,
    )
    glossary.box(ROLLOUT_ASSUMES, icon=":material/info:")


def engineers(trace: Trace) -> None:
    """The closed section with the code names and how they are checked."""
    with st.expander("For engineers", expanded=False, icon=":material/code:"):
        st.markdown(
            "Section 1: `attention_core.methods.norm_weighted` (value norms ‖v_j · W_O,h‖ per "
            "head and "
            "key, `trace.value_norm_lhk`; `norm_weighted_lhqk(trace)`) and "
            "`attention_core.methods.weight_effect` (`head_effect`, `largest_gap`: shares summed "
            "over the "
            "queries). Section 2: `attention_core.methods.rollout.trace_rollout(trace)`. Section "
            "3: "
            "`WhatIf(knocked=((layer, head), ...))` (a knocked head's z is zeroed before W_O), "
            "`knockout.prediction_change`, `knockout.vector_change`, `knockout.head_importance`. "
            "Section 4: `logit_lens.logit_lens(trace, positions)`. tests/core checks them "
            "against transformers' models (value norms to rtol 1e-4, rollout to 2e-5, knocked "
            "probabilities to 1e-4, cosines to 1e-5); tests/app/test_page_beyond.py checks this "
            f"page's numbers against the engine's. This run: {trace.config.name}, "
            f"{trace.n_tokens} tokens."
        )
