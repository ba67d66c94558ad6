"""The notes' examples page, first half: the cached engine calls, the "dirty quantum plumbing"
table (the Inside a decoder page's, reused) and the adjectives of "fluffy blue creature"; what a
head is, by the rule, is said from its numbers (``attention_core.lessons.head_words``).

Every number is the engine's (attention_core.lessons.notes), formatted here;
tests/app/test_page_notes.py checks each sentence's claim against the engine."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core.core.config import ModelConfig
from attention_core.lessons.head_words import head_sentence
from attention_core.lessons.notes import (
    ADJECTIVES,
    FLUFFY,
    JANE,
    JANE_NOTE,
    LOOK_BACK,
    MONSTER_ALONE,
    MONSTER_CONTEXT,
    MONSTER_PROBES,
    Adjectives,
    Jane,
    MonsterShift,
    PairHead,
    adjectives,
    jane,
    monster_shift,
    word_index,
)
from attention_core.lessons.notes_bank import BANK_PROBES
from ui import glossary, show
from ui.cache import LABELS, get_trace, model_config
from ui.text import decoder
from ui.text.cache import head_roles, read_probes
from viz.word_table import make_word_table

NEARLY = 0.8  # a verb's weight this share of the weakest adjective's or more reads "nearly as much"
THREE = st.column_config.NumberColumn(format="%.3f")  # learners read three decimals


# Worst case 4 × a few kB (two 10 × 10 word tables and a handful of floats).
@st.cache_data(max_entries=4, show_spinner="Measuring every head on the sentence…")
def get_adjectives(model: str) -> Adjectives:
    return adjectives(get_trace(model, FLUFFY))


# Worst case 4 × a few kB (5 × 5 tables, a few 5 × 64 arrays).
@st.cache_data(max_entries=4, show_spinner="Measuring every head on the sentence…")
def get_jane(model: str) -> Jane:
    return jane(get_trace(model, JANE))


# Worst case 4 × < 1 kB (a few cosines).
@st.cache_data(max_entries=4, show_spinner="Running the passage and the probe words…")
def get_monster(model: str) -> MonsterShift:
    kept, probes_lpd, _ = read_probes(model, ", ".join(MONSTER_PROBES))
    with_pass, without_pass = get_trace(model, MONSTER_CONTEXT), get_trace(model, MONSTER_ALONE)
    return monster_shift(with_pass, without_pass, tuple(kept), probes_lpd)


def config(model: str) -> ModelConfig:
    """The model's config (the page stops earlier when a model cannot be loaded)."""
    cfg = model_config(model)
    if cfg is None:
        raise ValueError(f"model {model!r} could not be loaded")
    return cfg


def quote(word: str) -> str:
    return f"“{word}”"


def plumbing() -> None:
    """The notes' table beside SmolLM2's, always on the decoder (its mask is the notes' zeros)."""
    glossary.say(
        "The notes draw one made-up head on “dirty quantum plumbing”. Their zeros are a "
        "decoder's mask: a word never attends to the words after it. So this table always runs "
        f"on {LABELS[decoder.MODEL]}, a real decoder trained with that mask, whichever model "
        "the sidebar shows."
    )
    decoder.note_table(decoder.MODEL)
    glossary.note(
        "Here each column is a query (an attending word) and each row a key, as in the "
        "notes, so the masked cells sit below the diagonal. The app's other pages draw it the "
        "other way round (a row per query), where the mask sits above the diagonal."
    )


def _table(model: str, pick: PairHead, words: tuple[str, ...], key: str, where: show.Area) -> None:
    causal = config(model).causal
    n = len(words)
    mask = np.triu(np.ones((n, n), bool), 1) if causal else None
    title = f"{LABELS[model]}, layer {pick.layer}, head {pick.head}"
    show.plot(make_word_table(pick.table_ww, words, masked_qk=mask, title=title), key, where=where)


def fluffy(model: str) -> None:
    """The head where the adjectives get the most weight from their nouns, how strong it is, and
    what it is by the rule over the whole sentence."""
    a = get_adjectives(model)
    best, (fl, bl, ve) = a.best, a.best.weights
    (creature, fluffy_), (_, blue), (forest, verdant) = ADJECTIVES
    glossary.say(
        f"The notes say {quote(fluffy_)} and {quote(blue)} feed {quote(creature)}, and "
        f"{quote(verdant)} feeds {quote(forest)} (they draw dots, no numbers). Rule used here: "
        "the head whose weakest of those three weights is largest, so a head that gives one "
        f"adjective weight and another none is not picked. On {LABELS[model]} that is **layer "
        f"{best.layer}, head {best.head}**: {quote(creature)} gives **{fl:.3f}** to "
        f"{quote(fluffy_)} and **{bl:.3f}** to {quote(blue)}; {quote(forest)} gives "
        f"**{ve:.3f}** to {quote(verdant)}."
    )
    glossary.say(_strength(a) + " " + _role(model, best))
    left, right = st.columns(2)
    _table(model, best, a.words, "notes_fluffy_best", left)
    _table(model, a.next_to, a.words, "notes_fluffy_next", right)
    glossary.note(_next_to(model, a))


def _role(model: str, pick: PairHead) -> str:
    """What ``pick``'s head is by the rule over the fluffy sentence's tokens."""
    tokens = get_trace(model, FLUFFY).tokens.tokens
    return head_sentence(head_roles(model, FLUFFY), pick.layer, pick.head, tokens)


def _next_to(model: str, a: Adjectives) -> str:
    """The head best at the two adjectives right before their nouns, and what "fluffy", two
    words back, gets from it."""
    near, (creature, fluffy_), (_, blue), (_, verdant) = a.next_to, *ADJECTIVES
    far = near.table_ww[word_index(a.words, creature), word_index(a.words, fluffy_)]
    joint = "but" if far < min(near.weights) else "and"
    why = " That is why the rule asks for all three weights." if far < min(near.weights) else ""
    return (
        f"Right: the head best at the two adjectives right before their nouns, layer "
        f"{near.layer}, head {near.head}: {quote(blue)} gets {near.weights[0]:.3f} and "
        f"{quote(verdant)} {near.weights[1]:.3f}, {joint} {quote(fluffy_)}, two words back, "
        f"gets {far:.3f}. {_role(model, near)}{why}"
    )


def _strength(a: Adjectives) -> str:
    """How strong the picked head is, in words that follow the numbers."""
    weakest = min(a.best.weights)
    even = max(a.even)
    verb, noun = LOOK_BACK
    ratio = weakest / even
    strength = "well above" if ratio >= 2 else "above" if ratio > 1 else "not above"
    if a.look_back > max(a.best.weights):
        also = "more than any of its adjectives gets, so these weights do not single out "
        also += "adjectives"
    elif a.look_back >= weakest:
        also = "at least as much as its weakest adjective gets, so these weights do not single "
        also += "out adjectives"
    elif a.look_back >= NEARLY * weakest:
        also = "nearly as much as its weakest adjective gets"
    else:
        also = "clearly less than its weakest adjective gets"
    return (
        f"How strong: an even spread over the words each noun may see would give at most "
        f"**{even:.3f}**; the weakest of the three is **{weakest:.3f}**, {ratio:.1f} times that "
        f"({strength} an even spread). The same head gives **{a.look_back:.3f}** from "
        f"{quote(verb)} (a verb) to {quote(noun)}, the noun before it: {also}."
    )


def engineers() -> None:
    """The code names and rules behind the page, in a closed expander."""
    adjective_pairs = ", ".join(f"{q}->{k}" for q, k in ADJECTIVES)
    jane_pairs = ", ".join(f"{q}->{k}" for q, k, _ in JANE_NOTE)
    with st.expander("For engineers"):
        st.code(
            f"attention_core.lessons.notes.adjectives: strongest_head over ({adjective_pairs}), "
            "the "
            "argmax over heads of the smallest weight.\n"
            "attention_core.lessons.notes.jane: closest_head, argmin of Σ|w - note| over "
            f"({jane_pairs}); "
            "soft_select = q_hqe · k_hke / √d_head, softmax, @ v_hke (equal to the trace's "
            "pattern_lhqk row and z_lhqe).\n"
            "length_effect; monster_shift at hidden_ltd[-1], probes by embed_words "
            f"{list(MONSTER_PROBES)}; context_window from config.n_positions, max_tokens.\n"
            "Word tables: attention_core.core.words.word_pattern (row = mean of the word's pieces' "
            "rows, "
            "column = sum of its pieces' columns); [CLS] and [SEP] count as words on MiniLM.\n"
            "Plumbing table: attention_core.methods.decoder_heads.note_tables / pick_head through "
            "ui.text.decoder.note_table.\n"
            "ΔE₂: attention_core.lessons.notes_delta.plumbing_delta over methods.values."
            "value_update at the last token of 'plumbing'; v = RMSNorm(E)·W_V of KV head "
            "h // 3 (GQA); z_e = pattern row @ v_ke; head_delta_d = z_e @ W_O[h·64:(h+1)·64]; "
            "Σ_h head_delta_d (no b_O on Llama) = delta_ltd[l]; tests/core/test_notes_delta.py "
            "checks z, W_O·z, ΔE and E against transformers' o_proj input, o_proj weight and "
            "self_attn output (to 1e-4 of each one's largest value or closer); hidden_ltd[l] + "
            "delta_ltd[l] = E'₂. What-if z_note_e: NOTE_TABLE_QK[-1] spread over a word's pieces "
            "in the head's own proportions.\n"
            "Bank: attention_core.lessons.notes_bank.bank_probes, methods.geometry.probe_cosines "
            "raw_lp at state 0 (hidden_ltd[0]) and the last state; probes by embed_words "
            f"{list(BANK_PROBES)} (a probe alone: MiniLM's [CLS] word [SEP]; SmolLM2's word "
            "at position 0, without the leading space the sentences' '▁bank' has).\n"
            "Slips: attention_core.lessons.notes_slips.model_sizes (config.d_model, d_head, "
            "n_heads, vocab_size; the pieces of PIECES_WORD from its trace's tokens).",
            language=None,
            wrap_lines=True,
        )
