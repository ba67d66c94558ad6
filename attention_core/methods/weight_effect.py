"""A weight is not an effect: how much of a head's weight a key gets, beside how much of what
the head moves comes from it (Kobayashi et al., 2020).

Head h hands query i the blend Σ_j pattern[i, j] · f_h(x_j); key j's part of it has length
``pattern[i, j] · ‖f_h(x_j)‖`` (``norm_weighted``). Summed over the queries, key j gets
``weight_share`` of the head's weight (each row sums to 1) and ``moved_share`` of the total length
the head moves. A key with a large weight share but a small moved share is a resting place, an
"attention sink": the head looks there and passes on almost nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attention_core.core.family import Trace

F64 = NDArray[np.float64]


@dataclass(frozen=True)
class WeightEffect:
    """One key of one head: its share of the head's weight and of what the head moves."""

    layer: int
    head: int
    key: int  # the key token's position
    weight_share: float  # Σ_q pattern[q, key] / Σ_q Σ_k pattern[q, k]
    moved_share: float  # the same with every weight times the key's value norm


def shares_hk(
    pattern_hqk: NDArray[np.floating], value_norm_hk: NDArray[np.floating]
) -> tuple[F64, F64]:
    """Each head's weight shares and moved shares per key, [h, k] each, every row summing to 1
    (a head whose every value norm is 0 moves nothing: its moved shares are 0)."""
    pattern = np.asarray(pattern_hqk, np.float64)
    if pattern.ndim != 3 or pattern.shape[::2] != np.shape(value_norm_hk):
        raise ValueError(
            f"pattern {pattern.shape} and value norms {np.shape(value_norm_hk)} do not match"
        )
    weight_hk = pattern.sum(axis=1)
    moved_hk = weight_hk * np.asarray(value_norm_hk, np.float64)
    weight_total = weight_hk.sum(axis=1, keepdims=True)
    moved_total = moved_hk.sum(axis=1, keepdims=True)
    weight_share = np.divide(
        weight_hk, weight_total, np.zeros_like(weight_hk), where=weight_total > 0
    )
    moved_share = np.divide(moved_hk, moved_total, np.zeros_like(moved_hk), where=moved_total > 0)
    return weight_share, moved_share


def head_effect(trace: Trace, layer: int, head: int) -> WeightEffect:
    """The key that gets the most weight in one head of ``trace``, and its two shares."""
    weight_hk, moved_hk = shares_hk(trace.pattern_lhqk[layer], trace.value_norm_lhk[layer])
    key = int(np.argmax(weight_hk[head]))
    return WeightEffect(layer, head, key, float(weight_hk[head, key]), float(moved_hk[head, key]))


def largest_gap(trace: Trace) -> WeightEffect:
    """The head and key of ``trace`` where the weight share most exceeds the moved share (the
    lowest layer, head and key on a tie): the clearest case of looking without moving."""
    best: WeightEffect | None = None
    for layer in range(len(trace.value_norm_lhk)):
        weight_hk, moved_hk = shares_hk(trace.pattern_lhqk[layer], trace.value_norm_lhk[layer])
        gap_hk = weight_hk - moved_hk
        head, key = np.unravel_index(int(np.argmax(gap_hk)), gap_hk.shape)
        if best is None or gap_hk[head, key] > best.weight_share - best.moved_share:
            best = WeightEffect(
                layer, int(head), int(key), float(weight_hk[head, key]), float(moved_hk[head, key])
            )
    if best is None:
        raise ValueError("the trace has no layers")
    return best
