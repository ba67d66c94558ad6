"""The d_k saturation measurement: against a plain-loop reference, its statistical set-up, and
the property it exists to show, on the real sentence's embeddings."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core import DK_GRID, row_entropy_bits, saturation_curve, trace_sentence
from attention_core.lessons.saturation import N_SEEDS, random_scores, unit_rows
from ui.presets import DEFAULT_SENTENCE, PRESETS


def _loop_stats(x: np.ndarray, d_k: int, seed: int, divisor: float) -> tuple[float, float]:
    """Mean row entropy (bits) and mean max weight, one multiply and one exp at a time."""
    rows = [[float(v) / math.sqrt(sum(float(a) ** 2 for a in r)) for v in r] for r in x]
    rng = np.random.default_rng((seed, d_k))
    w_q, w_k = rng.standard_normal((x.shape[1], d_k)), rng.standard_normal((x.shape[1], d_k))

    def project(row: list[float], w: np.ndarray) -> list[float]:
        return [sum(row[d] * float(w[d, e]) for d in range(len(row))) for e in range(d_k)]

    qs, ks = [project(r, w_q) for r in rows], [project(r, w_k) for r in rows]
    entropies, maxima = [], []
    for q in qs:
        logits = [sum(a * b for a, b in zip(q, k, strict=True)) / divisor for k in ks]
        top = max(logits)
        exps = [math.exp(v - top) for v in logits]
        weights = [v / sum(exps) for v in exps]
        entropies.append(-sum(p * math.log2(p) for p in weights if p > 0))
        maxima.append(max(weights))
    return sum(entropies) / len(entropies), sum(maxima) / len(maxima)


def test_curve_matches_a_plain_loop_reference():
    x = np.random.default_rng(7).standard_normal((5, 12)).astype(np.float32)
    d_ks, seeds = (1, 3, 8, 20), (0, 1, 2)
    sat = saturation_curve(x, d_ks, seeds)
    for i, d_k in enumerate(d_ks):
        scaled = np.array([_loop_stats(x, d_k, s, math.sqrt(d_k)) for s in seeds])
        raw = np.array([_loop_stats(x, d_k, s, 1.0) for s in seeds])
        np.testing.assert_allclose(sat.entropy_scaled[i], scaled[:, 0].mean(), rtol=1e-9)
        np.testing.assert_allclose(sat.max_scaled[i], scaled[:, 1].mean(), rtol=1e-9)
        np.testing.assert_allclose(sat.entropy_unscaled[i], raw[:, 0].mean(), rtol=1e-9)
        np.testing.assert_allclose(sat.max_unscaled[i], raw[:, 1].mean(), rtol=1e-9)
        np.testing.assert_allclose(sat.entropy_unscaled_std[i], raw[:, 0].std(), atol=1e-12)
    assert sat.d_ks == d_ks and sat.seeds == seeds and sat.n_tokens == 5


@pytest.mark.parametrize(("d_k", "n_heads"), [(1, 4000), (16, 1000), (384, 200)])
def test_scores_have_variance_d_k(d_k, n_heads):
    """Unit-length tokens through N(0, 1) weights: every q·k has variance d_k over random heads."""
    x = np.random.default_rng(1).standard_normal((4, 384))
    scores = np.stack([random_scores(x, d_k, seed) for seed in range(n_heads)])
    variance = scores.var(axis=0)
    assert variance.mean() == pytest.approx(d_k, rel=0.1)
    np.testing.assert_allclose(variance, d_k, rtol=0.35)
    np.testing.assert_allclose(np.linalg.norm(unit_rows(x), axis=1), 1.0)


def test_same_seed_same_head_and_seeds_differ():
    x = np.random.default_rng(2).standard_normal((6, 32))
    np.testing.assert_array_equal(random_scores(x, 8, 3), random_scores(x, 8, 3))
    assert not np.allclose(random_scores(x, 8, 3), random_scores(x, 8, 4))


@pytest.mark.parametrize("text", [DEFAULT_SENTENCE, *list(PRESETS)[1:4]])
def test_unscaled_saturates_and_scaled_stays_flat_on_real_sentences(model, text):
    """The point of the chart, on the model's word embeddings and the page's default seeds."""
    x = trace_sentence(model, text).word_td
    sat = saturation_curve(x, DK_GRID, tuple(range(N_SEEDS)))
    uniform = np.log2(len(x))
    # d_k = 1: √1 = 1, so both curves start at the same point
    assert sat.entropy_scaled[0] == pytest.approx(sat.entropy_unscaled[0])
    # unscaled: entropy collapses toward 0 bits, the largest weight toward 1
    assert sat.entropy_unscaled[-1] < 0.15 * sat.entropy_unscaled[0]
    assert sat.max_unscaled[-1] > 0.85
    assert sat.entropy_unscaled[-3:].max() < sat.entropy_unscaled[:3].min()
    assert sat.max_unscaled[-3:].min() > sat.max_unscaled[:3].max()
    # scaled: roughly flat, and close to a spread-out row at every d_k
    assert sat.entropy_scaled.max() / sat.entropy_scaled.min() < 1.2
    assert sat.entropy_scaled.min() > 0.75 * uniform
    assert sat.max_scaled.max() < 0.5


def test_one_token_gives_zero_entropy_and_full_weight():
    sat = saturation_curve(np.ones((1, 8)), (1, 64), (0,))
    np.testing.assert_array_equal(sat.entropy_unscaled, [0.0, 0.0])
    np.testing.assert_array_equal(sat.max_scaled, [1.0, 1.0])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_row_entropy_bits_is_between_zero_and_log2_n(raw):
    p = np.asarray(raw) + 1e-12
    p /= p.sum()
    h = float(row_entropy_bits(p[None, :])[0])
    assert -1e-9 <= h <= math.log2(len(p)) + 1e-9


def test_row_entropy_bits_extremes():
    np.testing.assert_allclose(row_entropy_bits(np.full((2, 8), 1 / 8)), [3.0, 3.0])
    assert row_entropy_bits(np.eye(4)).tolist() == [0.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    ("x", "d_ks", "seeds"),
    [
        (np.zeros((0, 4)), (1,), (0,)),
        (np.zeros(4), (1,), (0,)),
        (np.ones((2, 4)), (0,), (0,)),
        (np.ones((2, 4)), (1,), ()),
    ],
)
def test_bad_input_raises_value_error(x, d_ks, seeds):
    with pytest.raises(ValueError):
        saturation_curve(x, d_ks, seeds)
