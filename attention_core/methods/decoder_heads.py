"""What the decoder pages measure over a decoder's heads, each a stated rule on the model's numbers.

- The notes' "Dirty Quantum Plumbing" table (one invented head, queries as columns)
  next to the real model's word-level tables, and two rules that pick the head to show.
- The first-token "attention sink": how much of a query's weight lands on token 0.
- Grouped-query attention: how alike the patterns of query heads sharing one key/value head are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attention_core.core.family import Trace
from attention_core.core.words import word_pattern
from attention_core.methods.geometry import split_words

F64 = NDArray[np.float64]

NOTE_PHRASE = "dirty quantum plumbing"
NOTE_WORDS = ("dirty", "quantum", "plumbing")
# The notes' table with rows = queries (the notes print it transposed: a column per query).
NOTE_TABLE_QK = np.array([[1.0, 0.0, 0.0], [0.9, 0.1, 0.0], [0.55, 0.4, 0.05]])

RULES = {
    "closest": "closest to the notes' numbers: the smallest total difference over the six cells "
    "a query may fill, the other three being masked in every head",
    "adjective": "“plumbing” gives the most weight to “quantum”, the adjective just before it; "
    "“dirty” is also the first token, where many heads park weight",
}


@dataclass(frozen=True)
class HeadPick:
    """A head chosen by a rule, with the number the rule compared."""

    layer: int
    head: int
    rule: str  # a key of RULES
    value: float  # the total difference ("closest") or the weight ("adjective")


def pick_head(tables_lhqk: NDArray[np.floating], rule: str) -> HeadPick:
    """The head a rule picks among word tables [l, h, q, k] of the note's three words."""
    tables = np.asarray(tables_lhqk, dtype=np.float64)
    if tables.shape[2:] != NOTE_TABLE_QK.shape:
        raise ValueError(f"word tables must be [l, h, 3, 3], got {tables.shape}")
    if rule == "closest":
        score_lh = np.abs(tables - NOTE_TABLE_QK).sum(axis=(2, 3))
        layer, head = np.unravel_index(np.argmin(score_lh), score_lh.shape)
    elif rule == "adjective":
        score_lh = tables[:, :, 2, 1]
        layer, head = np.unravel_index(np.argmax(score_lh), score_lh.shape)
    else:
        raise ValueError(f"unknown rule {rule!r}; rules: {', '.join(RULES)}")
    return HeadPick(int(layer), int(head), rule, float(score_lh[layer, head]))


def note_tables(trace: Trace) -> F64:
    """Word tables [l, h, 3, 3] of the notes' phrase for every head of a decoder's trace of
    ``NOTE_PHRASE``; ValueError when the trace does not read as the notes' three words."""
    spans = split_words(trace.tokens.tokens)
    if tuple(word.lower() for word, _ in spans) != NOTE_WORDS:
        raise ValueError(f"the trace reads {[w for w, _ in spans]}, not {list(NOTE_WORDS)}")
    groups = [(word, list(span)) for word, span in spans]
    return np.stack(
        [
            [word_pattern(p_qk, groups) for p_qk in trace.pattern_lhqk[layer]]
            for layer in range(trace.config.n_layers)
        ]
    )


def first_token_share(pattern_hqk: NDArray[np.floating], query: int) -> NDArray[np.float32]:
    """The weight each head's ``query`` row puts on token 0 (the "attention sink"), [h]."""
    return np.asarray(pattern_hqk)[:, query, 0]


@dataclass(frozen=True)
class GroupSimilarity:
    """Overlap of every pair of heads' patterns in one layer, and its means within and across
    key/value groups. The overlap of two rows is Σ_k min(p_k, p'_k): the share of attention
    they have in common (1 = the same row, 0 = nothing in common); averaged over queries."""

    overlap_hh: F64  # [h, h]
    within: float  # mean over pairs of different heads sharing a key/value head
    across: float  # mean over pairs of heads with different key/value heads
    group_size: int  # query heads per key/value head


def group_similarity(pattern_hqk: NDArray[np.floating], n_kv_heads: int) -> GroupSimilarity:
    """How alike the query heads of one layer are, grouped by the key/value head they read."""
    p = np.asarray(pattern_hqk, dtype=np.float64)
    n_heads = p.shape[0]
    if n_kv_heads <= 0 or n_heads % n_kv_heads:
        raise ValueError(f"{n_heads} heads cannot share {n_kv_heads} key/value heads")
    size = n_heads // n_kv_heads
    # one head against all at a time: [h,q,k] at once, not [h,h,q,k] (170 MB at 512 tokens)
    overlap = np.stack([np.minimum(p[a], p).sum(-1).mean(-1) for a in range(n_heads)])
    group = np.arange(n_heads) // size
    same = group[:, None] == group[None, :]
    pairs = ~np.eye(n_heads, dtype=bool)
    across = float(overlap[~same].mean()) if (~same).any() else float("nan")
    return GroupSimilarity(overlap, float(overlap[same & pairs].mean()), across, size)
