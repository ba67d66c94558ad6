"""Positions two ways: rotary (RoPE, SmolLM2) and learned position vectors (MiniLM).

Rotary positions turn each query and key, pair of numbers by pair, by an angle that grows with
the token's position: band i turns by ``position · θ_i`` with ``θ_i = base^(-2i/d_head)``. A
score then only depends on how far apart the two tokens are (Su et al., RoFormer):
``R(m)q · R(n)k = q · R(n - m)k``. The pairs follow transformers' rotate-half layout (number i
pairs with number i + d_head/2), the layout the engine's llama module uses after un-permuting
GGUF's q/k rows.

Here: the frequencies from a model's own config, the rotation, the score of one query/key pair
as the distance grows, the curve of a head measured on a sentence's own q and k, and the cosine
similarity of a learned position table against distance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

F64 = NDArray[np.float64]


def rope_frequencies(d_head: int, base: float) -> F64:
    """θ_i = base^(-2i/d_head) for the d_head/2 bands (radians per position), fastest first."""
    if d_head <= 0 or d_head % 2:
        raise ValueError(f"d_head must be a positive even number, got {d_head}")
    if base <= 1.0:
        raise ValueError(f"the rotary base must be above 1, got {base}")
    return base ** (-np.arange(0, d_head, 2, dtype=np.float64) / d_head)


def rotate(
    x_te: NDArray[np.floating], positions_t: NDArray[np.integer | np.floating], freqs_b: F64
) -> F64:
    """Each row x_t turned by position_t · θ (rotate-half pairs); negative positions turn back."""
    half = freqs_b.size
    x = np.asarray(x_te, dtype=np.float64)
    if x.shape[-1] != 2 * half:
        raise ValueError(
            f"vectors of width {x.shape[-1]} need {x.shape[-1] // 2} bands, got {half}"
        )
    angles = np.multiply.outer(np.asarray(positions_t, dtype=np.float64), freqs_b)  # [t,b]
    cos, sin = np.cos(angles), np.sin(angles)
    x1, x2 = x[..., :half], x[..., half:]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)


def score_by_distance(
    q_e: NDArray[np.floating],
    k_e: NDArray[np.floating],
    distances: NDArray[np.integer | np.floating],
    freqs_b: F64,
) -> F64:
    """q · R(-Δ)k for each Δ: the score of query q placed Δ tokens after key k (before √d
    scaling), whatever their absolute positions are."""
    q = np.asarray(q_e, dtype=np.float64)
    k = np.asarray(k_e, dtype=np.float64)
    half = freqs_b.size
    q1, q2, k1, k2 = q[:half], q[half:], k[:half], k[half:]
    angles = np.multiply.outer(np.asarray(distances, dtype=np.float64), freqs_b)  # [Δ,b]
    # q · R(φ)k = Σ_b cos φ_b (q1k1 + q2k2) + sin φ_b (q2k1 - q1k2), with φ = -Δθ
    return np.cos(angles) @ (q1 * k1 + q2 * k2) - np.sin(angles) @ (q2 * k1 - q1 * k2)


def cosine_sum(distances: NDArray[np.integer | np.floating], freqs_b: F64) -> F64:
    """mean_b cos(Δ · θ_b): the score of a query and a key that are the same vector, equally long
    in every band, as they move Δ apart, relative to Δ = 0 (1 at Δ = 0)."""
    return np.cos(np.multiply.outer(np.asarray(distances, dtype=np.float64), freqs_b)).mean(-1)


@dataclass(frozen=True)
class HeadDistance:
    """One head's score against distance, on a sentence's own queries and keys."""

    distances: NDArray[np.int64]  # Δ = query position - key position, 0..max
    mean_score: F64  # mean over all query/key pairs of q·R(-Δ)k / √d_head, before rotation
    q_mean_e: F64  # the sentence's queries, un-rotated, averaged
    k_mean_e: F64  # the sentence's keys, un-rotated, averaged


def unrotate(x_te: NDArray[np.floating], freqs_b: F64) -> F64:
    """Rows rotated at positions 0..t-1 turned back to position 0 (the vectors before RoPE)."""
    return rotate(x_te, -np.arange(len(x_te)), freqs_b)


def head_distance(
    q_te: NDArray[np.floating], k_te: NDArray[np.floating], freqs_b: F64, max_distance: int
) -> HeadDistance:
    """The score a head gives, on average, to a key Δ tokens back, for Δ = 0..max_distance.

    ``q_te`` and ``k_te`` are a sentence's rotated queries and keys for one head (rows = positions
    0..t-1). The average over every query/key pair of q_m · R(-Δ)k_n is, by linearity, the mean
    query against the mean key, so one pair of vectors gives the whole curve."""
    if max_distance < 0:
        raise ValueError(f"max_distance must be at least 0, got {max_distance}")
    d_head = np.asarray(q_te).shape[-1]
    q_mean = unrotate(q_te, freqs_b).mean(0)
    k_mean = unrotate(k_te, freqs_b).mean(0)
    distances = np.arange(max_distance + 1)
    scores = score_by_distance(q_mean, k_mean, distances, freqs_b) / np.sqrt(d_head)
    return HeadDistance(distances, scores, q_mean, k_mean)


@dataclass(frozen=True)
class PositionSimilarity:
    """Cosine similarity of learned position vectors i and i + Δ, summarised per distance Δ."""

    distances: NDArray[np.int64]  # 0..max_distance
    mean: F64  # mean over i of cos(P_i, P_{i+Δ})
    low: F64  # smallest over i
    high: F64  # largest over i


def position_similarity(
    position_pd: NDArray[np.floating], max_distance: int, n_positions: int | None = None
) -> PositionSimilarity:
    """cos(P_i, P_{i+Δ}) over the first ``n_positions`` rows of a learned position table (all by
    default), for Δ = 0..max_distance."""
    table = np.asarray(position_pd, dtype=np.float64)[:n_positions]
    if not 0 <= max_distance < len(table):
        raise ValueError(f"max_distance must be in [0, {len(table) - 1}], got {max_distance}")
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    cos_pp = unit @ unit.T  # [p,d] @ [d,p] -> [p,p]
    diagonals = [np.diagonal(cos_pp, offset=delta) for delta in range(max_distance + 1)]
    return PositionSimilarity(
        np.arange(max_distance + 1),
        np.array([d.mean() for d in diagonals]),
        np.array([d.min() for d in diagonals]),
        np.array([d.max() for d in diagonals]),
    )
