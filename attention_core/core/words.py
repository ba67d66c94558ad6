"""Pieces grouped into words, and a pattern pooled from pieces to words.

SmolLM2 cuts "dirty" into "dir" + "ty"; a table of who attends to whom reads better by word. A
piece begins a new word when it starts with whitespace, opens the text, is punctuation (no
letter or digit: symbols, emoji and a lone newline too) or follows punctuation; a special
token ([CLS], <|im_end|>) is a word of its own; the byte pieces of one character (an emoji cut
in two) stay together. Pooling keeps rows summing to 1: a word's row is the mean of its pieces'
rows, its column the sum of theirs.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from attention_core.core.tokens import Tokens


def _is_punctuation(text: str) -> bool:
    """No letter or digit: punctuation, symbols, emoji, a newline alone."""
    return not any(c.isalnum() for c in text)


def _starts_word(tokens: Tokens, i: int) -> bool:
    (start, end), (prev_start, prev_end) = tokens.offsets_t2[i], tokens.offsets_t2[i - 1]
    if tokens.special_t[i] or tokens.special_t[i - 1]:
        return True
    if start < prev_end:  # the same character as the piece before (bytes of one emoji)
        return False
    piece, prev = tokens.text[start:end], tokens.text[prev_start:prev_end]
    if tokens.tokens[i].startswith("##"):  # a BERT WordPiece continuation
        return False
    return (
        piece[:1].isspace() or start > prev_end or _is_punctuation(piece) or _is_punctuation(prev)
    )


def word_spans(tokens: Tokens) -> list[tuple[str, list[int]]]:
    """[(word text, its piece positions)] in order; every position in exactly one word."""
    groups: list[list[int]] = []
    for i in range(len(tokens)):
        if i == 0 or _starts_word(tokens, i):
            groups.append([i])
        else:
            groups[-1].append(i)
    spans = []
    for group in groups:
        start, end = tokens.offsets_t2[group[0], 0], tokens.offsets_t2[group[-1], 1]
        text = tokens.text[start:end].strip()
        spans.append((text or "".join(tokens.tokens[i] for i in group), group))
    return spans


def word_pattern(
    pattern_qk: NDArray[np.floating], spans: list[tuple[str, list[int]]]
) -> NDArray[np.float64]:
    """[words, words]: row w is the mean of w's pieces' rows, column v the sum of v's pieces'
    columns, so each row still sums to 1 (as the pieces' rows did). In float64: a handful of
    words, and the tables are compared with the notes' numbers."""
    n = pattern_qk.shape[-1]
    if pattern_qk.shape != (n, n) or sorted(i for _, g in spans for i in g) != list(range(n)):
        raise ValueError(f"spans must cover the {pattern_qk.shape} pattern's positions once each")
    member_wt = np.zeros((len(spans), n))
    for w, (_, group) in enumerate(spans):
        member_wt[w, group] = 1.0
    mean_wt = member_wt / member_wt.sum(axis=1, keepdims=True)
    return mean_wt @ np.asarray(pattern_qk, np.float64) @ member_wt.T  # [w,t] @ [t,t] @ [t,w]
