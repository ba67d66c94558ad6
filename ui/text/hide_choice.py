"""What did that word do?, its choices: the word hidden, the token watched, the word hidden
instead for comparison and the probe words, each kept per sentence (a link's, else the page's
default), and what hiding them changes (``Hidden``), for ui.text.hide_word's views."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from attention_core.core.family import Trace
from attention_core.methods.hide_word import WordEffect, default_base, default_choice, words_of
from ui import glossary, params, router, safe
from ui.presets import auto_probes, curated
from ui.state.text import HIDE_WORD, HideWord
from ui.text.cache import read_probes, word_effect
from ui.widgets import numbered

# Up to this many tokens the page also hides a second word to compare with; past it, one word
# only: each hidden word is another whole pass (about the forward's time), and two what-if
# passes of a 2,048-token text do not fit the trace store beside the text's own.
COMPARE_TOKENS = 512


@dataclass(frozen=True)
class Hidden:
    """The word hidden and the token watched, with what hiding them changes."""

    word: str
    token: int
    base: str | None  # the word hidden instead, for comparison (None: no other word left)
    probes: list[str]
    effect: WordEffect
    other: WordEffect | None  # hiding ``base`` instead
    alone: str = "No other word is left to compare with."  # why ``other`` is None

    @property
    def pairs(self) -> list[tuple[str, WordEffect]]:
        """(hidden word, its effect): the word's, then the comparison's."""
        return [(self.word, self.effect)] + (
            [(self.base, self.other)] if self.base is not None and self.other is not None else []
        )


def _defaults(shared: router.Shared, trace: Trace, start: tuple[str, int]) -> list[str]:
    """Each choice the page's default unless it holds for this sentence (a link's on the first
    run): a new sentence gets its own. The words left to compare with."""
    hw, words, keep = HIDE_WORD, words_of(trace.tokens), shared.visible(trace)
    previous = hw.sentence
    if previous != shared.text:  # a new sentence: its own defaults (the URL's on the first run)
        if previous is not None:
            hw.word, hw.token, hw.base = "", -1, ""
        hw.sentence = shared.text
    hw.probes = auto_probes(hw.probes, previous, shared.text)  # unless edited
    if hw.word not in words:
        if hw.word:
            glossary.box(
                safe.md(
                    f"“{hw.word}” is not a word of this sentence; hiding “{start[0]}” instead."
                ),
                kind="warning",
            )
        hw.word = start[0]
    if hw.token not in keep:
        if hw.token != -1:
            glossary.box(
                f"Token {hw.token} is not one of the tokens shown; watching token "
                f"{start[1]} instead.",
                kind="warning",
            )
        hw.token = start[1] if start[1] in keep else int(keep[0])
    bases = [w for w, pos in words.items() if w != hw.word and hw.token not in pos]
    if bases and hw.base not in bases:
        hw.base = default_base(bases)
    params.write_url(HideWord.PAGE)  # the defaults just chosen
    return bases


def _menus(trace: Trace, keep: list[int], bases: list[str]) -> str:
    """The three menus and the probe box; the probes as typed."""
    left, middle, right = st.columns(3)
    left.selectbox(
        "Word to hide",
        list(words_of(trace.tokens)),
        key=HideWord.word.key,
        help="Hidden from every token in every layer; first occurrence.",
    )
    middle.selectbox(
        "Token to watch", keep, key=HideWord.token.key, format_func=numbered(trace.tokens.tokens)
    )
    right.selectbox(
        "Compare with hiding",
        bases,
        key=HideWord.base.key,
        disabled=not bases,
        help="A second word to hide instead, for comparison: the same measures, at the same layer.",
    )
    return str(
        st.text_input(
            "Probe words, comma-separated (at most 12, each up to 40 characters)",
            key=HideWord.probes.key,
            max_chars=params.MAX_CHARS,
            help="Each probe is run through the model alone and compared with the "
            "watched token at the same layer.",
        )
    )


def choose(shared: router.Shared, trace: Trace) -> Hidden:
    """The choices (or a message and a stopped page when the sentence has one word, or the
    token watched is part of the word hidden), and what hiding the word changes."""
    preset = curated(shared.text, shared.model)
    start = default_choice(trace.tokens, (preset.token, preset.key) if preset else None)
    if start is None:
        glossary.box(
            "This sentence has only one word, so there is no other word to hide it from. Type a "
            "sentence of at least two words in the sidebar."
        )
        st.stop()
    bases = _defaults(shared, trace, start)
    raw = _menus(trace, shared.visible(trace).tolist(), bases)
    word, token, words = HIDE_WORD.word, HIDE_WORD.token, words_of(trace.tokens)
    if token in words[word]:
        st.error(
            f"You are watching {safe.token(trace.tokens.tokens[token])}, which is part of "
            f"{safe.token(word)}, the word you hid. A hidden word is hidden from every token, "
            "itself included, so this would only measure the word losing sight of itself. Pick "
            "another token to watch, or another word to hide."
        )
        st.stop()
    probes, _, problems = read_probes(shared.model, raw)
    for problem in problems:
        glossary.box(safe.md(problem), kind="warning")
    effect = word_effect(shared.model, shared.text, words[word], token, tuple(probes))
    if bases and trace.n_tokens > COMPARE_TOKENS:
        alone = (
            f"At this length ({trace.n_tokens:,} tokens) the page hides one word only, not the "
            f"second to compare with: each hidden word is one more pass over the whole text (it "
            f"compares them up to {COMPARE_TOKENS:,} tokens)."
        )
        glossary.box(alone, kind="warning")
        return Hidden(word, token, None, probes, effect, None, alone)
    base = HIDE_WORD.base if bases else None
    other = word_effect(shared.model, shared.text, words[base], token, ()) if base else None
    return Hidden(word, token, base, probes, effect, other)


def who(trace: Trace, h: Hidden) -> str:
    return safe.token(trace.tokens.tokens[h.token])
