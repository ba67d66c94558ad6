"""Context-size cost: exact token counts, attention bytes against the trace's own arrays, what a
decoder's trace holds, the n² reference and the a·n + b·n² + c fit."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import measure_cost, square_law, tokens_of_length
from attention_core.lessons.cost import (
    LONG_SIZES,
    CostPoint,
    fit_cost,
    long_sizes,
    pattern_bytes,
    seconds_left,
    time_forward,
)
from attention_core.models import run_model


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
    assert [p.n_tokens for p in points] == [16, 32, 64]
    held = []
    for n in (16, 32, 64):  # MiniLM's trace holds every scores and pattern array
        trace = run_model(model, tokens_of_length(model, "dirty quantum plumbing", n))
        held.append(trace.scores_lhqk.nbytes + trace.pattern_lhqk.nbytes)
    assert [p.attention_bytes for p in points] == held
    assert all(p.held_bytes > p.attention_bytes for p in points)
    assert points[0].attention_bytes == 2 * 6 * 12 * 16 * 16 * 4
    assert points[1].attention_bytes == 4 * points[0].attention_bytes  # double n: 4× memory
    assert all(p.seconds > 0 for p in points)


def test_a_decoder_trace_holds_far_less_than_its_patterns(smollm2):
    """SmolLM2's trace keeps the residual stream, not the n² patterns: the bytes it reports
    are its own arrays' (``LlamaTrace.nbytes``), and at 256 tokens far below 30 × 9 × 256² × 4."""
    text = "The river bank was muddy after the storm."
    point = time_forward(smollm2, text, 256)
    cfg = smollm2.config
    trace = run_model(smollm2, tokens_of_length(smollm2, text, 256))
    assert point.n_tokens == 256 and point.seconds > 0
    assert trace.hidden_ltd.nbytes <= point.held_bytes == trace.nbytes  # the stream, at least
    assert pattern_bytes(256, cfg.n_layers, cfg.n_heads) == 30 * 9 * 256 * 256 * 4
    assert point.held_bytes < pattern_bytes(256, cfg.n_layers, cfg.n_heads) / 2
    assert long_sizes(cfg) == tuple(n for n in LONG_SIZES if n <= cfg.max_tokens)


def test_fit_recovers_a_known_cost_and_never_goes_negative():
    n = np.array([128, 256, 512, 1024, 2048])
    exact = 3e-4 * n + 2e-7 * n * n + 0.05
    fit = fit_cost(n, exact)
    assert (fit.a, fit.b, fit.c) == pytest.approx((3e-4, 2e-7, 0.05), rel=1e-6)
    share = fit.square_share(n)
    np.testing.assert_allclose(share, 2e-7 * n * n / exact, rtol=1e-6)
    linear = fit_cost(n, 5.0 * n)  # a line: no n² part, no constant
    assert (linear.a, linear.b, linear.c) == pytest.approx((5.0, 0.0, 0.0), abs=1e-9)
    dips = np.array([1.0, 0.5, 2.0, 8.0, 30.0])
    columns = np.stack([n, n * n, np.ones(5)], 1).astype(float)
    free, *_ = np.linalg.lstsq(columns, dips, rcond=None)
    assert free[0] < 0  # plain least squares gives this cost a negative per-token part
    fit = fit_cost(n, dips)
    assert min(fit.a, fit.b, fit.c) >= 0
    error = np.sum((fit(n) - dips) ** 2)
    for b in np.linspace(0, 2 * fit.b, 21):  # no other b (with its best c ≥ 0, a = 0) fits better
        c = max(0.0, float(np.mean(dips - b * n * n)))
        assert error <= np.sum((b * n * n + c - dips) ** 2) + 1e-12
    with pytest.raises(ValueError, match="positive sizes"):
        fit_cost(np.array([0, 1]), np.array([1.0, 2.0]))


def test_time_left_is_the_fit_of_the_lengths_timed_so_far():
    sizes = (128, 256, 512, 1024)
    timed = tuple(CostPoint(n, 0.01 * n + 1e-5 * n * n, 0, 0) for n in sizes[:3])
    assert seconds_left(timed[:1], sizes) is None  # one point: no growth to read
    assert seconds_left(timed, sizes) == pytest.approx(0.01 * 1024 + 1e-5 * 1024**2)
    assert seconds_left(timed, sizes[:3]) == 0.0


def test_square_law_passes_through_the_last_point():
    n = np.array([16, 32, 64, 128])
    curve = square_law(n, np.array([5.0, 7.0, 20.0, 80.0]))
    np.testing.assert_allclose(curve, [1.25, 5.0, 20.0, 80.0])


def test_bad_arguments_are_refused(model):
    with pytest.raises(ValueError, match="n_tokens must be in"):
        tokens_of_length(model, "x", model.config.max_tokens + 1)
    with pytest.raises(ValueError, match="at least one size"):
        measure_cost(model, "x", sizes=())
    with pytest.raises(ValueError, match="matching"):
        square_law(np.array([1, 2]), np.array([1.0]))
