"""The most telling head of a sentence: where one word reads another word most strongly.

The rule, in the order it is applied:

1. Candidates are pairs of pieces (query, key) where both are *content words*: not [CLS]/[SEP],
   not punctuation, not a function word (the, of, was, …), and not hidden by ``WhatIf.hidden``;
   and the key belongs to another word than the query (a piece reading another piece of its own
   word, "##rdan" -> "ve", says nothing about context).
2. Heads that only look at a neighbour are left out: a head that gives at least half of *every*
   piece's attention to the piece just before it (or to the one just after it) would "read" the
   neighbouring word whatever it meant. In all-MiniLM-L6-v2 that is layer 0, head 2 (about 1.00
   on the previous piece for every piece; in the example sentences of three or more words the
   next most neighbour-bound head reached 0.44). "Every piece" means those between [CLS] and
   [SEP]: with only two of them, more heads pass the test by chance and are left out too.
3. The pick is the candidate with the largest weight over all layers and heads.
4. If no pair of content words exists (a one- or two-word sentence, or only function words), the
   same search runs over every piece that is not [CLS]/[SEP] (function words and punctuation
   included); if there is still no pair, there is no telling head (None).
5. In a decoder (SmolLM2) the first token is never the key: most heads park most of their weight
   on it whatever it says (an "attention sink"), so it would win every time without telling
   anything about the sentence. A decoder's token reads only earlier tokens, so the key always
   comes before the query.

Every step runs one layer at a time: a decoder's trace computes its layers when asked. The pick
holds numbers only; ``attention_core.lessons.head_words.telling_sentence`` says it in words (its
weight against an even spread, the head's role by ``methods.roles.RULE``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attention_core.core.family import Stack, Trace
from attention_core.core.tokens import Tokens
from attention_core.methods.geometry import split_words

NEIGHBOUR_SHARE = 0.5  # a head giving at least this to one neighbour of every piece is positional
MIN_PIECES_TO_JUDGE = 2  # with one piece there is no neighbour to speak of

# English function words: they carry grammar rather than meaning, so a word reading "the" (or "the"
# reading its noun) is not what a learner should see first. Closed classes only: articles,
# pronouns, prepositions, conjunctions, auxiliaries and a few particles.
_FUNCTION_WORDS = """a an the this that these those i me my mine you your yours he him his she
her hers it its we us our ours they them their theirs who whom whose which what there here of in
on at by for with from to into onto upon about over under after before between through during
without within along across against among around off out up down as than and or but nor so yet if
then because while although though is am are was were be been being do does did done have has had
having will would shall should can could may might must not no very just also too s t"""
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS.split())  # "s", "t": the tokenizer splits it's, don't


@dataclass(frozen=True)
class TellingHead:
    """One head, one query piece, one key piece, and the weight between them."""

    layer: int  # counted from 0
    head: int  # counted from 0
    query: int  # position of the piece that attends
    key: int  # position of the piece it attends to
    weight: float  # pattern_lhqk[layer, head, query, key]
    between_content_words: bool  # False when the fallback (any non-special pieces) chose it
    skipped_heads: tuple[tuple[int, int], ...]  # (layer, head) left out as neighbour-only


def word_index_t(tokens: Tokens) -> NDArray[np.int64]:
    """Which word each piece belongs to (0, 1, …); -1 for [CLS]/[SEP]/[PAD]."""
    index_t = np.full(len(tokens), -1, dtype=np.int64)
    for i, (_, positions) in enumerate(split_words(tokens.tokens)):
        index_t[list(positions)] = i
    return index_t


def content_t(tokens: Tokens) -> NDArray[np.bool_]:
    """True for pieces of content words: not special, not punctuation, not a function word."""
    out = np.zeros(len(tokens), dtype=bool)
    for word, positions in split_words(tokens.tokens):
        out[list(positions)] = any(map(str.isalnum, word)) and word not in FUNCTION_WORDS
    return out & ~tokens.special_t


def neighbour_heads_lh(pattern_lhqk: Stack, inner: NDArray[np.int64]) -> NDArray[np.bool_]:
    """[l, h] True for heads that give at least NEIGHBOUR_SHARE of every ``inner`` piece's
    attention to the piece before it, or of every inner piece's to the piece after it."""
    n_layers = len(pattern_lhqk)
    if len(inner) < MIN_PIECES_TO_JUDGE:
        return np.zeros((n_layers, pattern_lhqk[0].shape[0]), dtype=bool)
    rows = []
    for layer in range(n_layers):
        pattern_hqk = pattern_lhqk[layer]
        before = pattern_hqk[:, inner, inner - 1].min(axis=-1)
        after = pattern_hqk[:, inner, inner + 1].min(axis=-1)
        rows.append((before >= NEIGHBOUR_SHARE) | (after >= NEIGHBOUR_SHARE))
    return np.stack(rows)


def _best(
    pattern_lhqk: Stack, allowed_qk: NDArray[np.bool_], skip_lh: NDArray[np.bool_]
) -> tuple[int, int, int, int] | None:
    """(layer, head, query, key) of the largest allowed weight, or None if nothing is allowed."""
    best: tuple[float, tuple[int, int, int, int]] | None = None
    if not allowed_qk.any():
        return None
    for layer in range(len(pattern_lhqk)):
        ok_hqk = allowed_qk[None] & ~skip_lh[layer][:, None, None]
        if not ok_hqk.any():
            continue
        scores = np.where(ok_hqk, pattern_lhqk[layer], -1.0)
        head, query, key = (int(i) for i in np.unravel_index(np.argmax(scores), scores.shape))
        if best is None or scores[head, query, key] > best[0]:
            best = (float(scores[head, query, key]), (layer, head, query, key))
    return None if best is None else best[1]


def _pairs(pieces_t: NDArray[np.bool_], word_t: NDArray[np.int64]) -> NDArray[np.bool_]:
    """[q, k] True where both pieces are allowed and belong to different words."""
    return pieces_t[:, None] & pieces_t[None, :] & (word_t[:, None] != word_t[None, :])


def telling_head(trace: Trace) -> TellingHead | None:
    """The most telling head of ``trace`` by the rule in this module's docstring, or None."""
    tokens, pattern = trace.tokens, trace.pattern_lhqk
    word_t = word_index_t(tokens)
    visible_t = word_t >= 0
    visible_t[list(trace.whatif.hidden)] = False
    # Pieces with a neighbour on each side (in BERT those between [CLS] and [SEP]).
    skip_lh = neighbour_heads_lh(pattern, np.arange(1, len(tokens) - 1))
    if trace.config.causal:
        visible_t[0] = False  # rule 5: the attention sink
    content = content_t(tokens) & visible_t
    content_pick = _best(pattern, _pairs(content, word_t), skip_lh)
    found = content_pick or _best(pattern, _pairs(visible_t, word_t), skip_lh)
    if found is None:
        return None
    layer, head, query, key = found
    weight = float(pattern[layer, head, query, key])
    skipped = tuple((int(a), int(b)) for a, b in zip(*np.nonzero(skip_lh), strict=True))
    return TellingHead(layer, head, query, key, weight, content_pick is not None, skipped)
