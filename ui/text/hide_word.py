"""What did that word do? (pages/hide_word.py): what hiding the chosen word (ui.text.hide_choice)
changes, layer by layer, in the watched token's vector, its probes' cosines and the sentence
embedding."""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st

from attention_core.core.family import Trace
from ui import glossary, safe, show
from ui.show import NUM
from ui.text.hide_choice import Hidden, who
from viz.embedding_shift import layer_name
from viz.word_effect import make_word_effect
from viz.word_effect_probes import make_word_effect_probes

LEAD = (
    "Hide one word from every other token, in every layer, and run the sentence again: whatever "
    "changes in another token's vector is what that word passed on through attention. The "
    "notes say “river” makes “bank” a riverside bank: on a sentence with both, hide “river”, "
    "watch “bank”, and measure what it loses."
)


def summary(trace: Trace, h: Hidden) -> None:
    """Where hiding the word changes the token most, beside hiding the other word."""
    hw, most = safe.token(h.word), h.effect.most_changed
    cos, dist = h.effect.cosine_l[most], h.effect.distance_l[most]
    said = (
        f"Hiding {hw} changes {who(trace, h)} most {layer_name(most, trace.config)}: there "
        f"its vectors with and without {hw} have cosine {cos:.3f} (an angle of "
        f"{np.degrees(np.arccos(min(cos, 1))):.0f}°) and lie {dist:.2f} apart, "
        f"{dist / h.effect.length_l[most]:.0%} of the vector's length."
    )
    if h.other is not None and h.base is not None:
        cos2, dist2 = h.other.cosine_l[most], h.other.distance_l[most]
        said += (
            f" Hiding {safe.token(h.base)} instead, at the same point: cosine {cos2:.3f}, "
            f"{dist2:.2f} apart"
            + (
                f", {'farther' if dist2 > dist else 'less far'} than with {hw} hidden here."
                if abs(dist2 - dist) > 0.005 * max(dist, dist2)
                else ", about as far here."
            )
        )
        farther = h.other.distance_l[1:] > h.effect.distance_l[1:]  # the embedding: both 0
        said += (
            f" Over all {farther.size} layers' outputs, hiding {safe.token(h.base)} moves it "
            f"farther at {int(farther.sum())}."
        )
    glossary.say(said)


def moved(trace: Trace, h: Hidden) -> None:
    """How far the token moved at each layer, for each word hidden."""
    most = h.effect.most_changed
    cos, dist = h.effect.cosine_l[most], h.effect.distance_l[most]
    watched = trace.tokens.tokens[h.token]
    fig = make_word_effect(
        {w: e.distance_l for w, e in h.pairs},
        {w: e.cosine_l for w, e in h.pairs},
        h.effect.length_l,
        watched=watched,
        config=trace.config,
    )
    show.plot(fig, "hw_moved")
    glossary.note(
        f"How to read this: each bar is the distance between {who(trace, h)}'s vector in the "
        "ordinary pass and in a second pass with one word hidden, at the same layer (hover for "
        "the cosine and the angle). In the embedding, before the first layer, no token has read "
        "any other yet, so nothing has moved there. Cosines stay high even for large effects: a "
        f"move of {dist:.2f} on a vector about {h.effect.length_l[most]:.0f} long still leaves "
        f"a cosine of {cos:.3f}. So read the distances, and compare the two words."
        + ("" if h.other is not None else f" ({h.alone})")
    )
    states = [layer_name(i, trace.config) for i in range(h.effect.cosine_l.size)]
    table: dict[str, Any] = {"layer": states}
    for w, e in h.pairs:
        table |= {f"cosine, {w} hidden": e.cosine_l, f"distance, {w} hidden": e.distance_l}
    table[f"length of {watched}"] = h.effect.length_l
    st.dataframe(
        table, key="hw_table", hide_index=True, column_config=dict.fromkeys(list(table)[1:], NUM)
    )


def meaning(trace: Trace, h: Hidden, after: int) -> None:
    """What the word adds to the token's cosines with the probes, after the sidebar's layer."""
    if not h.probes:
        glossary.box("Add at least one probe word to see what the hidden word adds to the meaning.")
        return
    hw, e, at = safe.token(h.word), h.effect, layer_name(after, trace.config)
    with_p, without_p = e.probe_cosine_with_lp[after], e.probe_cosine_without_lp[after]
    left, right = st.columns([3, 2])
    fig = make_word_effect_probes(with_p, without_p, h.probes, hidden_word=h.word, state_label=at)
    show.plot(fig, "hw_probes_chart", left)
    cols = {"with": with_p, "hidden": without_p, "with − hidden": with_p - without_p}
    right.dataframe(
        {"probe": h.probes} | cols,
        key="hw_probe_table",
        hide_index=True,
        column_config=dict.fromkeys(cols, NUM),
    )
    # the left column's words first: the glossary explains a term where it is read first
    glossary.say(probe_words(hw, who(trace, h), h.probes, with_p - without_p, at), where=left)
    glossary.note(
        f"How to read this: the cosine of {who(trace, h)} with each probe word (run through the "
        f"model alone), both taken {at} (the sidebar's layer); move the sidebar's "
        "Layer slider to compare another layer's output. A positive "
        f"difference means {hw} pulls {who(trace, h)} towards that probe.",
        where=right,
    )


SAME = 0.002  # below this spread of the probes' changes, no probe stands out


def signed(x: float) -> str:
    """A change to three decimals with its sign, "about 0" when it rounds to 0."""
    return "about 0" if abs(x) < 0.0005 else f"{x:+.3f}"


def probe_words(hw: str, watched: str, probes: list[str], change_p: Any, at: str) -> str:
    """What the hidden word does to the watched token's cosines with the probes, beyond the
    drift every probe shares (their mean change), at the hidden state named ``at``."""
    change_p = np.asarray(change_p, dtype=np.float64)
    at = at[:1].upper() + at[1:]  # not str.capitalize, which would lower "RMSNorm"
    if change_p.size == 1:
        pull = float(change_p[0])
        return f"{at}: {hw} changes {watched}'s cosine with {safe.token(probes[0])} by {pull:+.3f}."
    shared = float(change_p.mean())
    beyond = change_p - shared
    big = int(np.argmax(np.abs(beyond)))
    if abs(beyond[big]) < SAME:
        return (
            f"{at}, {hw} moves {watched} about equally with respect "
            f"to every probe ({signed(shared)} on average): no probe stands out."
        )
    return (
        f"{at}, {hw} changes {watched}'s cosine with every probe by "
        f"{signed(shared)} on average; {safe.token(probes[big])} stands out, at "
        f"{change_p[big]:+.3f}: "
        f"{hw} pulls {watched} {'towards' if beyond[big] > 0 else 'away from'} it, compared with "
        "the other probes."
    )


def sentence(trace: Trace, h: Hidden) -> None:
    """The sentence embedding with and without the word (an encoder's), or why there is none."""
    if h.effect.sentence_cosine is None:
        glossary.box(
            f"{trace.config.name} makes no sentence embedding (it is a decoder: it predicts the "
            "next token), so there is none to compare. In a decoder a hidden word changes only "
            "the tokens after it: the ones before it never saw it."
        )
        return
    for col, (name, e) in zip(st.columns(2), h.pairs, strict=False):
        glossary.metric(
            f"Sentence embedding: cosine, {safe.token(name)} hidden",
            f"{e.sentence_cosine:.3f}",
            where=col,
        )
        glossary.note(
            f"Distance between the two embeddings: {e.sentence_distance:.3f} (each has "
            "length 1, so the largest possible is 2).",
            where=col,
        )
    glossary.note(
        "How to read this: the cosine between the sentence's embedding (the mean of its tokens' "
        "final vectors, made length 1, as sentence-transformers computes it) with and without "
        "the word. Part of the change is only that the hidden word's own vector is left out of "
        "the mean."
    )


def engineers(h: Hidden) -> None:
    effect = h.effect
    with st.expander("For engineers"):
        st.markdown(
            f"Hidden token positions {list(effect.hidden)} (the word's pieces, first "
            f"occurrence); watched position {list(effect.watched)}. The second pass is "
            f"`trace_sentence(model, text, WhatIf(hidden={effect.hidden}))`: the hidden keys are "
            "masked in every layer and every head, as transformers does for `attention_mask` 0; "
            "the hidden tokens keep their positions and still run their own query rows. "
            "`tests/core/test_hide_word.py` checks the patterns, hidden states and pooled "
            "embedding against transformers (eager attention) with `attention_mask` 0 at those "
            "positions, to 1e-5 / 1e-4 / 1e-5. Check on this sentence: in the embedding the "
            f"distance is {effect.distance_l[0]:.1e} (nothing read yet). "
            "Numbers come from `attention_core.methods.hide_word.hide_word`"
            + (
                "; the sentence embedding uses sentence-transformers' 256-token window and "
                "leaves the hidden tokens out of its mean."
                if effect.sentence_cosine is not None
                else "."
            )
        )
