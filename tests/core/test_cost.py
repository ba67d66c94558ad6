"""Context-size cost: exact token counts, attention bytes from the trace, the n² reference."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import attention_bytes, measure_cost, square_law, tokens_of_length


@pytest.mark.parametrize("n", [3, 16, 100, 512])
def test_tokens_of_length_is_exact_and_keeps_the_markers(model, n):
    tokens = tokens_of_length(model, "The river bank was muddy", n)
    assert len(tokens) == n
    assert tokens.tokens[0] == "[CLS]" and tokens.tokens[-1] == "[SEP]"
    assert tokens.tokens[1 : min(4, n - 1)] == ("the", "river", "bank")[: n - 2]


def test_text_without_pieces_falls_back_to_a_filler(model):
    assert len(tokens_of_length(model, "   ", 20)) == 20


def test_measured_bytes_are_the_n_squared_formula(model):
    points = measure_cost(model, "dirty quantum plumbing", sizes=(16, 32, 64))
    cfg = model.config
    assert [p.n_tokens for p in points] == [16, 32, 64]
    assert [p.attention_bytes for p in points] == [
        attention_bytes(n, cfg.n_layers, cfg.n_heads) for n in (16, 32, 64)
    ]
    assert points[0].attention_bytes == 2 * 6 * 12 * 16 * 16 * 4
    assert points[1].attention_bytes == 4 * points[0].attention_bytes  # double n: 4× memory
    assert all(p.seconds > 0 for p in points)


def test_square_law_passes_through_the_last_point():
    n = np.array([16, 32, 64, 128])
    curve = square_law(n, np.array([5.0, 7.0, 20.0, 80.0]))
    np.testing.assert_allclose(curve, [1.25, 5.0, 20.0, 80.0])


def test_bad_arguments_are_refused(model):
    with pytest.raises(ValueError, match="n_tokens must be in"):
        tokens_of_length(model, "x", 513)
    with pytest.raises(ValueError, match="at least one size"):
        measure_cost(model, "x", sizes=())
    with pytest.raises(ValueError, match="matching"):
        square_law(np.array([1, 2]), np.array([1.0]))
