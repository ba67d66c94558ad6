"""Worked arithmetic behind single numbers on screen: how one cell of a pattern came to be.
(What each head does as a whole is ``methods.roles``.)"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attention_core.core.functional import AttentionSteps

F32 = NDArray[np.float32]


@dataclass(frozen=True)
class CellArithmetic:
    """How pattern[query, key] came to be: q·k as a sum, the scaling, the softmax share."""

    products_e: F32  # q_e · k_e for every dimension e; their sum is the score
    score: float  # q·k
    scaled: float  # after ÷√d_k and temperature
    masked: bool  # True when the mask hid this key from this query
    row_max: float  # the largest logit in the query's row (subtracted for stability)
    row_exp_sum: float  # Σ_j exp(logit_j - row_max): the softmax denominator
    share: float  # pattern[query, key] = exp(scaled - row_max) / row_exp_sum


def cell_arithmetic(
    q_qe: F32, k_ke: F32, steps: AttentionSteps, query: int, key: int
) -> CellArithmetic:
    """Explain one cell of one head's pattern from its queries, keys and computed stages."""
    n_q, n_k = steps.pattern.shape
    if not (0 <= query < n_q and 0 <= key < n_k):
        raise ValueError(f"cell ({query}, {key}) is outside the {n_q}×{n_k} pattern")
    row = steps.masked[query].astype(np.float64)
    finite = row[np.isfinite(row)]
    row_max = float(finite.max()) if finite.size else 0.0
    return CellArithmetic(
        products_e=q_qe[query] * k_ke[key],
        score=float(steps.scores[query, key]),
        scaled=float(steps.scaled[query, key]),
        masked=not bool(steps.allowed_qk[query, key]),
        row_max=row_max,
        row_exp_sum=float(np.exp(finite - row_max).sum()),
        share=float(steps.pattern[query, key]),
    )


def copy_stripe_q(pattern_qk: NDArray[np.floating], n: int) -> NDArray[np.float64]:
    """For a run of ``n`` tokens read twice (the pattern's first 2n positions), each query of the
    second copy's weight on the key one step right of its earlier copy: query i (n ≤ i < 2n)
    reads key i − n + 1, the token that followed token i the first time. [n]"""
    if n < 1 or pattern_qk.shape[0] < 2 * n or pattern_qk.shape[1] < 2 * n:
        raise ValueError(f"a pattern of shape {pattern_qk.shape} holds no {n} tokens read twice")
    query = np.arange(n, 2 * n)
    return np.asarray(pattern_qk[query, query - n + 1], dtype=np.float64)
