"""The notes' examples page, section 1 continued: the notes' ΔE₂ = 0.55·V₀ + 0.4·V₁ + 0.05·V₂ on
the head the plumbing table shows, and what E'₂ = E₂ + ΔE₂ is in the real model.

Every number is the engine's (attention_core.lessons.notes_delta), formatted here;
tests/app/test_page_notes.py checks each sentence's claim against the engine."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core.lessons.notes_delta import PlumbingDelta, plumbing_delta
from attention_core.methods.decoder_heads import (
    NOTE_PHRASE,
    NOTE_TABLE_QK,
    NOTE_WORDS,
    note_tables,
    pick_head,
)
from attention_core.methods.values import output_bias
from ui import glossary
from ui.cache import LABELS, get_model, get_trace
from ui.state.text import Decoder
from ui.text import decoder
from ui.text.notes.tables import THREE

SHOWN = 3  # numbers of a vector shown
SAME_WAY = 0.99  # the what-if's cosine with the head's own ΔE₂ at or above this: "nearly the same"
ROUGHLY = 0.8  # at or above this: "roughly the same way"


# Worst case 2 × a few kB (two rules; a handful of 64- and 576-number vectors).
@st.cache_data(max_entries=2, show_spinner="Adding up the value vectors…")
def get_delta(rule: str) -> PlumbingDelta:
    trace = get_trace(decoder.MODEL, NOTE_PHRASE)
    pick = pick_head(note_tables(trace), rule)
    bias = output_bias(get_model(decoder.MODEL), pick.layer)
    return plumbing_delta(trace, bias, pick.layer, pick.head)


def first(v: np.ndarray) -> str:
    """A vector's first numbers, as the page prints them."""
    return "(" + ", ".join(f"{x:.3f}" for x in v[:SHOWN]) + ", …)"


def length(v: np.ndarray) -> float:
    return float(np.linalg.norm(v))


def delta() -> None:
    """The head's weighted sum of values, its size beside E₂'s, then the model's real E'₂."""
    d = get_delta(Decoder().rule)
    model = LABELS[decoder.MODEL]
    note = ", ".join(f"{w:g}" for w in NOTE_TABLE_QK[-1])
    glossary.say(
        f"**The notes' ΔE₂ on this head.** The notes add up ΔE₂ = 0.55·V₀ + 0.4·V₁ + 0.05·V₂: "
        f"the weights of “plumbing”'s row ({note}) times each word's value vector. Here is that "
        f"sum on layer {d.layer}, head {d.head}, with the head's own weights. {model} reads the "
        f"phrase as {len(d.tokens)} tokens, so there are {len(d.tokens)} value vectors, each "
        f"{d.v_ke.shape[1]} numbers long."
    )
    weighted = d.weights_k[:, None] * d.v_ke
    st.dataframe(
        {
            "token": list(d.tokens),
            "word": [NOTE_WORDS[w] for w in d.word_t],
            "weight": d.weights_k,
            f"value V (first {SHOWN} numbers)": [first(v) for v in d.v_ke],
            "weight × V": [first(v) for v in weighted],
        },
        key="notes_delta_terms",
        hide_index=True,
        column_config={"weight": THREE},
    )
    words = ", ".join(f"“{w}” {x:.3f}" for w, x in zip(NOTE_WORDS, d.word_weights, strict=True))
    glossary.say(
        f"Per word the weights are {words} (the notes: {note}). Their sum, the notes' ΔE₂ for "
        f"this head, is **{first(d.z_e)}**: {d.z_e.size} numbers, length "
        f"**{length(d.z_e):.2f}**. “plumbing”'s own vector E₂, as it enters layer {d.layer} "
        f"(already changed by the {d.layer} layers below), has {d.hidden_d.size} numbers and "
        f"length **{length(d.hidden_d):.1f}**."
    )
    _model_update(d)
    _what_if(d)


def _model_update(d: PlumbingDelta) -> None:
    """E'₂ = E₂ + ΔE₂ as the model computes it: W_O per head, the heads added."""
    n_heads = d.head_norms_h.size
    rank = int((d.head_norms_h > d.head_norms_h[d.head]).sum()) + 1
    share = length(d.delta_d) / length(d.hidden_d)
    glossary.say(
        f"**What E'₂ = E₂ + ΔE₂ is in the model.** A sum of {d.z_e.size} numbers cannot be "
        f"added to a vector of {d.hidden_d.size}. In the model each head's sum goes through its "
        f"own part of one more learned matrix, W_O, which turns its {d.z_e.size} numbers into "
        f"{d.hidden_d.size}: for this head a vector of length **{length(d.head_delta_d):.2f}** "
        f"(number {rank} by length of the layer's {n_heads} heads). The layer's {n_heads} heads "
        f"add their results, and that total is the ΔE₂ the model adds to E₂: length "
        f"**{length(d.delta_d):.2f}**, {share:.0%} of E₂'s. So E'₂ = E₂ + ΔE₂ holds in the "
        f"model, with ΔE₂ from all {n_heads} heads, not one; the layer's feed-forward part then "
        "adds an update of its own."
    )


def _what_if(d: PlumbingDelta) -> None:
    """The notes' weights on the same value vectors: a what-if, not the model."""
    cos = d.note_agreement
    way = (
        "nearly the same way as"
        if cos >= SAME_WAY
        else "roughly the same way as"
        if cos >= ROUGHLY
        else "a clearly different way from"
    )
    glossary.note(
        f"What-if, not the model: with the notes' own weights 0.55, 0.4, 0.05 on the same value "
        f"vectors (“dirty”'s 0.55 split between its two tokens as the head splits its own "
        f"weight), the sum starts {first(d.z_note_e)} and has length {length(d.z_note_e):.2f}; "
        f"it points {way} the head's own (cosine {cos:.3f})."
    )
