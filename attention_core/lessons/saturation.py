"""Why attention divides by √d_k: softmax saturation of random heads as d_k grows, measured.

The experiment behind "Attention Is All You Need", §3.2.1, run on a real sentence: each token
embedding is scaled to unit length, and W_Q, W_K [d, d_k] are drawn with N(0, 1) entries, so
every query and key entry has variance exactly 1 and q·k has variance d_k. Without ÷√d_k the
scores spread out as √d_k, the softmax piles all weight on one key (row entropy → 0 bits, max
weight → 1); with it the scores keep unit variance and the pattern keeps its shape. Also what
÷√d_k does to one head's scores and to softmax's gradient (``scale_effect``), at softmax's own
input and where it reaches the raw scores, and the spread of random dot products.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass

import numpy as np
from numpy.typing import NDArray

from attention_core.core.functional import attention_steps, softmax

F64 = NDArray[np.float64]
DK_GRID: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 384)  # d_k values measured
N_SEEDS = 8  # random heads averaged per d_k


@dataclass(frozen=True)
class Saturation:
    """Mean row entropy and max weight per d_k, each [len(d_ks)]; _std is the spread over seeds."""

    d_ks: tuple[int, ...]  # the d_k values measured
    seeds: tuple[int, ...]  # one random head (W_Q, W_K) per seed and d_k
    n_tokens: int  # keys per row: the entropy of a uniform row is log2(n_tokens)
    entropy_scaled: NDArray[np.float64]  # bits, with ÷√d_k
    entropy_unscaled: NDArray[np.float64]  # bits, raw Q·Kᵀ
    max_scaled: NDArray[np.float64]  # largest weight in a row, with ÷√d_k
    max_unscaled: NDArray[np.float64]  # largest weight in a row, raw Q·Kᵀ
    entropy_scaled_std: NDArray[np.float64]
    entropy_unscaled_std: NDArray[np.float64]
    max_scaled_std: NDArray[np.float64]
    max_unscaled_std: NDArray[np.float64]


def row_entropy_bits(pattern_qk: NDArray[np.floating]) -> NDArray[np.float64]:
    """Shannon entropy of each row in bits; zero weights contribute 0 (0·log 0 = 0)."""
    p = np.asarray(pattern_qk, dtype=np.float64)
    logs = np.log2(p, out=np.zeros_like(p), where=p > 0)
    return -(p * logs).sum(axis=-1)


def unit_rows(x_td: NDArray[np.floating]) -> NDArray[np.float64]:
    """Each token embedding scaled to length 1 (all-zero rows stay zero)."""
    x = np.asarray(x_td, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def random_scores(x_td: NDArray[np.floating], d_k: int, seed: int) -> NDArray[np.float64]:
    """Raw Q·Kᵀ [q, k] of one random head: unit-length tokens, W_Q and W_K entries N(0, 1).

    The generator is seeded with (seed, d_k), so each (seed, d_k) pair is its own fixed head."""
    x = unit_rows(x_td)
    rng = np.random.default_rng((seed, d_k))
    w_q_de = rng.standard_normal((x.shape[1], d_k))
    w_k_de = rng.standard_normal((x.shape[1], d_k))
    return (x @ w_q_de) @ (x @ w_k_de).T  # [q,e] @ [e,k] -> [q,k]


def _row_stats(scores_qk: NDArray[np.float64], divisor: float) -> tuple[float, float]:
    pattern = softmax(scores_qk / divisor)
    return float(row_entropy_bits(pattern).mean()), float(pattern.max(axis=1).mean())


def saturation_curve(
    x_td: NDArray[np.floating],
    d_ks: tuple[int, ...] = DK_GRID,
    seeds: tuple[int, ...] = tuple(range(N_SEEDS)),
) -> Saturation:
    """Measure mean row entropy (bits) and mean max weight, with and without ÷√d_k, for random
    heads of width d_k over the tokens ``x_td`` [t, d]; averaged over ``seeds``."""
    if x_td.ndim != 2 or x_td.shape[0] < 1:
        raise ValueError(f"x_td must be [tokens >= 1, d_model], got shape {x_td.shape}")
    if not d_ks or not seeds or min(d_ks) < 1:
        raise ValueError(f"need d_k values >= 1 and at least one seed, got {d_ks}, {seeds}")
    stats = np.empty((len(d_ks), len(seeds), 4))  # [d_k, seed, (H scaled, max scaled, H, max)]
    for i, d_k in enumerate(d_ks):
        for j, seed in enumerate(seeds):
            scores_qk = random_scores(x_td, d_k, seed)
            stats[i, j] = (*_row_stats(scores_qk, np.sqrt(d_k)), *_row_stats(scores_qk, 1.0))
    mean, std = stats.mean(axis=1), stats.std(axis=1)
    return Saturation(
        tuple(d_ks),
        tuple(seeds),
        int(x_td.shape[0]),
        mean[:, 0],
        mean[:, 2],
        mean[:, 1],
        mean[:, 3],
        std[:, 0],
        std[:, 2],
        std[:, 1],
        std[:, 3],
    )


def softmax_jacobian(pattern_k: NDArray[np.floating]) -> F64:
    """∂a/∂x of softmax for one row: diag(a) − a·aᵀ. Near 0 everywhere when one weight is ~1."""
    a = np.asarray(pattern_k, dtype=np.float64)
    return np.diag(a) - np.outer(a, a)


def jacobian_norms(pattern_qk: NDArray[np.floating]) -> F64:
    """Per row, the size (Frobenius norm) of ``softmax_jacobian``, without building it:
    ‖diag(a) − a·aᵀ‖² = Σa² − 2·Σa³ + (Σa²)²."""
    a = np.asarray(pattern_qk, dtype=np.float64)
    sq = (a * a).sum(axis=-1)
    return np.sqrt(np.maximum(sq - 2 * (a**3).sum(axis=-1) + sq * sq, 0.0))


@dataclass(frozen=True)
class ScaleEffect:
    """What dividing by √d_k does to one head on one sentence (means over query rows)."""

    spread_raw: float  # standard deviation of a row's raw scores
    spread_scaled: float  # the same after ÷√d_k
    top_raw: float  # largest weight of a row, softmax of the raw scores
    top_scaled: float  # largest weight of a row, softmax of the scaled scores
    grad_raw: float  # size (Frobenius norm) of softmax's Jacobian on a raw row
    grad_scaled: float  # the same on a scaled row (the Jacobian at softmax's own input)
    grad_to_scores: float  # with the division, the gradient that reaches the raw scores q·k
    # (and through them W_Q and W_K): softmax(s / √d_k)'s Jacobian with respect to s is the one
    # at its own input times 1/√d_k. Without the division that gradient is ``grad_raw`` itself.


def scale_effect(scores_qk: NDArray[np.floating], d_k: int) -> ScaleEffect:
    """Spread, largest weight and softmax gradient of one head, with and without ÷√d_k."""
    figures = []
    for scale in (False, True):
        steps = attention_steps(np.asarray(scores_qk, np.float64), d_k, scale=scale)
        figures += [
            float(steps.scaled.std(axis=-1).mean()),
            float(steps.pattern.max(axis=-1).mean()),
            float(jacobian_norms(steps.pattern).mean()),
        ]
    (s_raw, t_raw, g_raw), (s_sc, t_sc, g_sc) = figures[:3], figures[3:]
    return ScaleEffect(s_raw, s_sc, t_raw, t_sc, g_raw, g_sc, g_sc / float(np.sqrt(d_k)))


def random_scale_effect(x_td: NDArray[np.floating], d_k: int, n_heads: int = 8) -> ScaleEffect:
    """``scale_effect`` averaged over ``n_heads`` random heads of width ``d_k`` on the tokens
    ``x_td`` (attention_core.lessons.saturation.random_scores: q and k entries of variance 1)."""
    effects = [scale_effect(random_scores(x_td, d_k, seed), d_k) for seed in range(n_heads)]
    return ScaleEffect(*(float(m) for m in np.mean([astuple(e) for e in effects], axis=0)))


def dot_spread(d_ks: tuple[int, ...], n_pairs: int = 4096, seed: int = 0) -> tuple[F64, F64]:
    """Mean and standard deviation of q·k for random q, k with unit-variance entries, per width:
    the mean stays near 0 while the spread grows like √d_k."""
    rng = np.random.default_rng(seed)
    means, stds = [], []
    for d_k in d_ks:
        dots = np.einsum("ne,ne->n", *rng.standard_normal((2, n_pairs, d_k)))
        means.append(dots.mean())
        stds.append(dots.std())
    return np.array(means), np.array(stds)
