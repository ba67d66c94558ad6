"""Why attention divides by √d_k: softmax saturation of random heads as d_k grows, measured.

The experiment behind "Attention Is All You Need", §3.2.1, run on a real sentence: each token
embedding is scaled to unit length, and W_Q, W_K [d, d_k] are drawn with N(0, 1) entries, so
every query and key entry has variance exactly 1 and q·k has variance d_k. Without ÷√d_k the
scores spread out as √d_k, the softmax piles all weight on one key (row entropy → 0 bits, max
weight → 1); with it the scores keep unit variance and the pattern keeps its shape.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attention_core.core.functional import softmax

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
