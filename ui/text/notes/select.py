"""The notes' examples page, second half: "Jane visits Africa" as a soft SELECT, the dot product
beside cosine similarity, the "monster" vector, and the context window.

Every number is the engine's (attention_core.lessons.notes; what a head is, by the rule, from
attention_core.lessons.head_words), formatted here;
tests/app/test_page_notes.py checks each sentence's claim against the engine."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core.lessons.head_words import head_sentence, weight_sentence
from attention_core.lessons.notes import (
    JANE,
    JANE_NOTE,
    MONSTER_CONTEXT,
    context_window,
    length_effect,
    word_index,
)
from attention_core.methods.geometry import SPACE
from attention_core.models import tokenize
from ui import glossary, registry
from ui.cache import LABELS, get_model, get_trace
from ui.text.cache import head_roles
from ui.text.notes.tables import THREE, config, get_jane, get_monster, quote

SHOWN = 3  # numbers of a value vector shown
CONTEXT_SLIP = (
    "The size of the attention pattern is what’s commonly referred to as the context window."
)


def word(token: str) -> str:
    """A token as prose quotes it: without the mark of the space it starts with."""
    return token.removeprefix(SPACE)


def _vector(v_e: np.ndarray) -> str:
    return ", ".join(f"{x:.3f}" for x in v_e[:SHOWN]) + ", …"


def jane(model: str) -> None:
    """The notes' table beside the head closest to it, then one query's SELECT step by step."""
    j = get_jane(model)
    best = j.best
    causal = config(model).causal
    real = f"{LABELS[model]}, layer {best.layer}, head {best.head}"
    seen = [not causal or word_index(j.words, q) >= word_index(j.words, k) for q, k, _ in JANE_NOTE]
    st.dataframe(
        {
            "query": [q for q, _, _ in JANE_NOTE],
            "key": [k for _, k, _ in JANE_NOTE],
            "the notes": [w for _, _, w in JANE_NOTE],
            real: list(best.weights),
            "can the query see the key?": ["yes" if ok else "no: it comes later" for ok in seen],
        },
        key="notes_jane_note",
        hide_index=True,
        column_config={"the notes": THREE, real: THREE},
    )
    total = sum(abs(w - n) for w, (_, _, n) in zip(best.weights, JANE_NOTE, strict=True))
    blocked = (
        f" In a decoder a word sees only itself and the words before it, so "
        f"{sum(not ok for ok in seen)} of the notes' three rows cannot happen here; pick MiniLM "
        "in the sidebar for an encoder, which reads both ways."
        if not all(seen)
        else ""
    )
    tokens = get_trace(model, JANE).tokens.tokens
    role = head_sentence(head_roles(model, JANE), best.layer, best.head, tokens, "this head")
    glossary.say(
        f"Rule: the head closest to the notes' three numbers (smallest total difference, here "
        f"**{total:.3f}**): layer {best.layer}, head {best.head}. {role}{blocked} In the notes "
        "this is self-attention inside one sentence (“your brain looks for the most related "
        "word in the rest of the sentence”), as computed here: the sentence attends to itself."
    )
    st.page_link(
        registry.page("listen").path,
        label="Real cross-attention: Whisper's written words attending to the sound",
        icon=":material/graphic_eq:",
    )
    _select(model)


def _select(model: str) -> None:
    s = get_jane(model).select
    token, root = word(s.keys[s.query]), f"÷ √{config(model).d_head}"
    glossary.say(
        f"The SELECT for {quote(token)}, step by step: its query is compared with every key it "
        f"may see (dot product), divided by √{config(model).d_head}, turned into weights "
        "that sum to 1 (softmax), and the weights blend the keys' value vectors."
    )
    weighted = s.weight_k[:, None] * s.value_ke
    st.dataframe(
        {
            "key": list(s.keys),
            "query · key": s.dot_k,
            root: s.scaled_k,
            "weight": s.weight_k,
            f"value (first {SHOWN} numbers)": [_vector(v) for v in s.value_ke],
            "weight × value": [_vector(v) for v in weighted],
        },
        key="notes_jane_select",
        hide_index=True,
        column_config={
            "query · key": THREE,
            root: THREE,
            "weight": THREE,
        },
    )
    top = int(np.argmax(s.weight_k))
    trace = get_trace(model, JANE)
    glossary.say(
        f"{weight_sentence(trace, s.layer, s.head, s.query, top)} "
        f"The sum of the weighted values, ({_vector(s.z_e)}) out of {s.z_e.size} numbers, is "
        f"what this head hands on for {quote(token)}: a weighted bag of values, a soft SELECT "
        "that takes a little of every row instead of one."
    )


def dot_cosine(model: str) -> None:
    """Dot product and cosine of the same query and keys, and a longer key as a what-if."""
    s = get_jane(model).select
    token = word(s.keys[s.query])
    st.dataframe(
        {
            "key": list(s.keys),
            "query · key": s.dot_k,
            "cosine": s.cos_k,
            "length of the key": s.k_norm_k,
        },
        key="notes_dot_cos",
        hide_index=True,
        column_config={"query · key": THREE, "cosine": THREE, "length of the key": THREE},
    )
    by_dot, by_cos = (word(s.keys[int(np.argmax(x))]) for x in (s.dot_k, s.cos_k))
    if by_dot == by_cos:
        ranking = f"Here both pick {quote(by_dot)} first."
    else:
        ranking = (
            f"Here they disagree: the dot product picks {quote(by_dot)}, cosine {quote(by_cos)}."
        )
        dot_k, cos_k = s.k_norm_k[int(np.argmax(s.dot_k))], s.k_norm_k[int(np.argmax(s.cos_k))]
        if cos_k < dot_k:
            ranking += f" The key of {quote(by_cos)} is shorter ({cos_k:.3f} against {dot_k:.3f})."
    top = int(np.argmax(s.dot_k))
    effect = length_effect(s.q_e, s.k_ke[top])
    glossary.say(
        f"The notes say attention uses the dot product, not cosine similarity. The dot product "
        f"is the cosine times both lengths ({quote(token)}'s query has length {s.q_norm:.3f}), so "
        f"a longer key scores higher even when it points less the same way. {ranking}"
    )
    glossary.say(
        f"What if {quote(word(s.keys[top]))}'s key were {effect.factor:g} times as long (a "
        f"what-if, not the model): the dot product goes from **{effect.dot:.3f}** to "
        f"**{effect.dot_longer:.3f}**, the cosine is **{effect.cos:.3f}** "
        f"before and **{effect.cos_longer:.3f}** after. Dividing every score by "
        f"√{config(model).d_head} changes no ranking: it divides them all by the same number."
    )


def monster(model: str) -> None:
    """Which way the notes' passage moves "monster", measured against probe words."""
    m = get_monster(model)
    st.dataframe(
        {
            "probe word": list(m.probes),
            "last sentence alone": m.without_p,
            "whole passage": m.with_p,
            "change": m.change_p,
        },
        key="notes_monster",
        hide_index=True,
        column_config={
            "last sentence alone": THREE,
            "whole passage": THREE,
            "change": st.column_config.NumberColumn(format="%+.3f"),
        },
    )
    mike = m.probes.index("Mike Wazowski")
    way = "towards" if m.change_p[mike] > 0 else "away from"
    rank = int((m.with_p > m.with_p[mike]).sum()) + 1
    hope = "the closest, as the notes hope" if rank == 1 else "not the closest the notes hope for"
    glossary.say(
        f"With the passage before it, {LABELS[model]} moves “monster” **{way}** “Mike "
        f"Wazowski”: cosine {m.without_p[mike]:.3f} → {m.with_p[mike]:.3f}. In the whole "
        f"passage “Mike Wazowski” is number {rank} of the {len(m.probes)} probes, {hope}. "
        f"{_changes(m.probes, m.change_p)} The passage does move “monster”: its two vectors "
        f"have cosine {m.moved:.3f} (1 would be not moved at all)."
    )
    glossary.note(
        "Each cosine compares “monster” at the model's last output with the probe word run "
        "through the model on its own, at the same point"
        + ("" if config(model).post_norm else " (after the final rescaling, RMSNorm)")
        + "."
    )


def _changes(probes: tuple[str, ...], change_p: np.ndarray) -> str:
    """The probes' changes in words that follow their signs."""
    up, down = int(np.argmax(change_p)), int(np.argmin(change_p))
    rise, fall = f"{quote(probes[up])} ({change_p[up]:+.3f})", f"{quote(probes[down])} "
    fall += f"({change_p[down]:+.3f})"
    if (change_p < 0).all():
        return f"All {len(probes)} cosines fall: least for {rise}, most for {fall}."
    if (change_p > 0).all():
        return f"All {len(probes)} cosines rise: most for {rise}, least for {fall}."
    return f"It moves most towards {rise} and most away from {fall}."


def context(model: str) -> None:
    """The context window: the size of a pattern now and at the model's longest input."""
    cfg = config(model)
    n = len(tokenize(get_model(model), MONSTER_CONTEXT))
    w = context_window(cfg, n)
    glossary.say(f"The notes: “{CONTEXT_SLIP}”")
    glossary.say(
        "A gentle correction: the context window is the number of tokens a model can read at "
        "once; for a text of n tokens each head's pattern has n × n weights, so the pattern "
        f"grows as the square of the tokens. The monster passage is **{w.n_tokens}** tokens: "
        "each head's pattern is "
        f"{w.n_tokens} × {w.n_tokens} = **{w.weights:,}** weights, and {LABELS[model]} has "
        f"{w.heads} heads ({cfg.n_layers} layers × {cfg.n_heads}). {LABELS[model]} was built for "
        f"a context window of **{w.longest:,}** tokens, a pattern of {w.weights_longest:,} "
        "weights per head. Twice the tokens, four times the weights: that is why the window was "
        "hard to grow, as the notes say."
    )
    if w.runs < w.longest:
        glossary.note(
            f"This app runs it on at most {w.runs:,} tokens, to keep the patterns in memory."
        )
