"""Pieces grouped into words, and patterns pooled from pieces to words (both model families)."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import tokenize, trace_sentence
from attention_core.core.words import word_pattern, word_spans


def _words(model, text):
    return [(w, g) for w, g in word_spans(tokenize(model, text))]


def test_smollm2_pieces_group_into_words(smollm2):
    assert _words(smollm2, "dirty quantum plumbing") == [
        ("dirty", [0, 1]),
        ("quantum", [2]),
        ("plumbing", [3]),
    ]
    assert [w for w, _ in _words(smollm2, "def f(x): return x**2")] == [
        "def",
        "f",
        "(",
        "x",
        "):",
        "return",
        "x",
        "**",
        "2",
    ]
    words = _words(smollm2, "Wait 🤔🎉 naïve café\nok")
    assert [w for w, _ in words] == ["Wait", "🤔", "🎉", "naïve", "café", "⏎", "ok"]
    assert [i for _, g in words for i in g] == list(range(12))  # every piece once, in order


def test_minilm_pieces_group_into_words(model):
    assert _words(model, "The dirtiest river.") == [
        ("[CLS]", [0]),
        ("The", [1]),
        ("dirtiest", [2, 3]),
        ("river", [4]),
        (".", [5]),
        ("[SEP]", [6]),
    ]


@pytest.mark.parametrize("text", ["dirty quantum plumbing", "Ça été très bien, naïve café 😀!"])
def test_word_pattern_rows_sum_to_one_and_equal_the_plain_loop(smollm2, text):
    trace = trace_sentence(smollm2, text)
    spans = word_spans(trace.tokens)
    pattern = trace.pattern_lhqk[5, 2]
    pooled = word_pattern(pattern, spans)
    assert np.allclose(pooled.sum(axis=1), 1.0, atol=1e-5)
    for w, (_, rows) in enumerate(spans):
        for v, (_, cols) in enumerate(spans):
            expected = np.mean([sum(pattern[r, c] for c in cols) for r in rows])
            assert abs(pooled[w, v] - expected) < 1e-6


def test_word_pattern_refuses_spans_that_do_not_cover_the_pattern():
    with pytest.raises(ValueError, match="cover"):
        word_pattern(np.eye(3, dtype=np.float32), [("a", [0]), ("b", [1])])
