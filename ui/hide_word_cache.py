"""Cached numbers and default choices of the "What did that word do?" page.

``attention_core.hide_word`` runs the sentence twice and returns both traces (up to ~230 MB each
at 512 tokens); st.cache_data would pickle and copy them on every rerun. The wrapper keeps only
the per-layer numbers the page draws (a few hundred floats), once per (model, text, hidden word,
watched token, probes), shared by every session.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attention_core import Tokens, WhatIf, default_token, split_words
from attention_core.knockout import compare_passes
from ui.cache import get_trace
from ui.embedding_shift_cache import probe_vectors
from ui.presets import curated

F64 = NDArray[np.float64]
# Little words that carry grammar more than meaning: never the default word to hide, and the
# first choice for the baseline, the word whose hiding shows what "no particular effect" is.
FUNCTION_WORDS = frozenset({
    "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "by", "for", "with",
    "from", "as", "is", "are", "was", "were", "be", "been", "am", "it", "its", "this", "that",
    "these", "those", "he", "she", "they", "we", "you", "i", "his", "her", "their", "our", "my",
    "your", "me", "him", "them", "us", "not", "no", "so", "if", "then", "than", "there", "here",
    "do", "does", "did", "has", "have", "had", "will", "would", "can", "could",
})  # fmt: skip


@dataclass(frozen=True)
class EffectNumbers:
    """The numbers of a ``WordEffect`` without its two traces (same field names and meaning)."""

    hidden_word: str
    watched_word: str
    hidden: tuple[int, ...]
    watched: tuple[int, ...]
    cosine_l: F64
    distance_l: F64
    length_l: F64
    sentence_cosine: float
    probe_cosine_with_lp: F64
    probe_cosine_without_lp: F64

    @property
    def probe_pull_lp(self) -> F64:
        """Cosine to each probe with the word minus without it."""
        return self.probe_cosine_with_lp - self.probe_cosine_without_lp

    @property
    def most_changed(self) -> int:
        """The hidden state with the smallest cosine, as ``WordEffect.most_changed``."""
        return int(np.argmin(self.cosine_l))

    @property
    def sentence_distance(self) -> float:
        """Distance between the two sentence embeddings, both of length 1: √(2 − 2·cos)."""
        return float(np.sqrt(max(2.0 - 2.0 * self.sentence_cosine, 0.0)))


# Worst case 64 × ~10 kB (per-layer numbers; 7 × probes cosines) = 640 kB. The two passes come
# from the shared trace store (its byte budget and forward-pass slots), not from this cache.
@st.cache_data(max_entries=64, show_spinner="Running the sentence with the word hidden…")
def word_effect(
    model: str, text: str, word_positions: tuple[int, ...], token: int, probes: tuple[str, ...]
) -> EffectNumbers:
    """``hide_word`` on the sidebar's text, with the probes' per-layer vectors (probes the model
    cannot read are expected to be dropped by the caller, as ``probe_vectors`` reports them).
    The sentence's own pass is the one every page shares; the pass with the word hidden goes
    through the same store."""
    _, vectors_lpd, _ = probe_vectors(model, probes)
    with_word = get_trace(model, text)
    without_word = get_trace(model, text, WhatIf(hidden=tuple(word_positions)))
    effect = compare_passes(with_word, without_word, token, vectors_lpd)
    return EffectNumbers(**{f.name: getattr(effect, f.name) for f in fields(EffectNumbers)})


def words_of(tokens: Tokens) -> dict[str, tuple[int, ...]]:
    """Each word of the sentence once (its first occurrence, as ``word_pieces`` finds it)."""
    found: dict[str, tuple[int, ...]] = {}
    for word, positions in split_words(tokens.tokens):
        found.setdefault(word, positions)
    return found


def default_view(text: str, tokens: Tokens) -> tuple[str, int] | None:
    """(word to hide, token to watch): a curated example's word and token (for the river bank:
    hide "river", watch "bank"); otherwise the last real word watched and the first content word
    hidden. None when the sentence has no word besides the watched one."""
    words = words_of(tokens)
    preset = curated(text)
    if preset and preset.token < len(tokens) and preset.key < len(tokens):
        owner = [w for w, pos in words.items() if preset.key in pos and preset.token not in pos]
        if owner:
            return owner[0], preset.token
    token = default_token(tokens.tokens, tokens.special_t)
    others = [w for w, pos in words.items() if token not in pos]
    content = [w for w in others if w not in FUNCTION_WORDS and any(c.isalnum() for c in w)]
    return ((content or others)[0], token) if others else None


def default_base(options: list[str]) -> str:
    """The baseline word: the last function word among ``options``, else the last option."""
    little = [w for w in options if w in FUNCTION_WORDS]
    return (little or options)[-1]
