"""Attention rollout (Abnar & Zuidema, ACL 2020): how much each token's vector after a layer
draws on each input token, following the weights through every layer below it.

Per layer l, ``A_l = 0.5 · (the heads' patterns averaged) + 0.5 · I``: the identity stands for
the residual connection, which carries each token's own vector past the attention. Then
``R_0 = A_0`` and ``R_l = A_l · R_(l-1)``. Each row of R_l sums to 1. It is an estimate, not a
measurement: it assumes every head counts the same, the residual counts as half, and it leaves
out LayerNorm, the MLPs and what the value vectors carry (``norm_weighted`` measures that).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attention_core.core.family import Trace
from attention_core.core.pooling import WHOLE_UP_TO, held_block, pool_mean

F32 = NDArray[np.float32]


ROLLOUT_FULL = WHOLE_UP_TO  # the longest text whose rollout is held whole, [l, t, t]


@dataclass(frozen=True)
class PooledRollout:
    """Every layer's rollout, each ``block`` × ``block`` tokens one cell (their mean; the last
    block may be shorter): [l, p, p], p = ceil(t / block). ``block`` is 1 up to ROLLOUT_FULL
    (``core.pooling.held_block``)."""

    block: int
    rollout_lqk: F32


def _steps(pattern_lhqk: Any, n_layers: int, dtype: type) -> Iterator[NDArray[Any]]:
    """R_0 .. R_(n_layers-1), one at a time (each [t, t], accumulated in ``dtype``)."""
    first = np.asarray(pattern_lhqk[0])
    n = first.shape[-1]
    half_eye = 0.5 * np.eye(n, dtype=dtype)
    reached: NDArray[Any] = np.eye(n, dtype=dtype)
    for layer in range(n_layers):
        pattern_hqk = first if layer == 0 else np.asarray(pattern_lhqk[layer])
        mixed_qk = 0.5 * pattern_hqk.mean(axis=0, dtype=dtype) + half_eye
        reached = mixed_qk @ reached
        yield reached


def _count(pattern_lhqk: Any, layers: int | None) -> int:
    n_layers = len(pattern_lhqk) if layers is None else layers
    if not 0 < n_layers <= len(pattern_lhqk):
        raise ValueError(f"layers must be in 1..{len(pattern_lhqk)}, got {layers}")
    return n_layers


def rollout_lqk(pattern_lhqk: Any, layers: int | None = None) -> F32:
    """R_l for the first ``layers`` layers (default all), [l, t, t], accumulated in float64.
    ``pattern_lhqk`` is anything indexed by layer that gives [h, t, t] (an array, or a decoder
    trace's ``LayerStack``, which computes one layer at a time)."""
    n_layers = _count(pattern_lhqk, layers)
    n = np.asarray(pattern_lhqk[0]).shape[-1]
    out = np.empty((n_layers, n, n), np.float32)
    for layer, reached in enumerate(_steps(pattern_lhqk, n_layers, np.float64)):
        out[layer] = reached
    return out


def pooled_rollout(pattern_lhqk: Any, block: int) -> PooledRollout:
    """Every layer's rollout pooled by ``block`` (``pool_mean``), never holding more than one
    layer's [t, t] at a time; past ROLLOUT_FULL tokens accumulated in float32 (a product of
    row-stochastic matrices: ~1e-6 from float64, and half the time and memory)."""
    n = np.asarray(pattern_lhqk[0]).shape[-1]
    dtype = np.float64 if n <= ROLLOUT_FULL else np.float32
    layers = len(pattern_lhqk)
    pooled = [pool_mean(r_qk, block) for r_qk in _steps(pattern_lhqk, layers, dtype)]
    return PooledRollout(block, np.stack(pooled))


def trace_rollout_pooled(trace: Trace) -> PooledRollout:
    """A trace's rollout as held: whole up to ROLLOUT_FULL tokens (block 1), pooled beyond
    (``core.pooling.held_block``). A decoder's ``LlamaTrace`` computes it once and keeps it; a BERT
    ``Trace`` (at most 512 tokens) gets it computed, a few matrix products, when asked."""
    block = held_block(trace.n_tokens)
    if block == 1:
        return PooledRollout(1, trace_rollout(trace))
    memo = getattr(trace, "memo", None)
    if memo is None:
        return pooled_rollout(trace.pattern_lhqk, block)
    held: F32 = memo(
        "rollout_pooled", lambda: pooled_rollout(trace.pattern_lhqk, block).rollout_lqk
    )
    return PooledRollout(block, held)


def trace_rollout(trace: Trace) -> F32:
    """``rollout_lqk`` of a trace's patterns, [l, t, t], for texts up to ROLLOUT_FULL tokens
    (longer: ``trace_rollout_pooled``): a decoder's ``LlamaTrace`` computes it once and
    keeps it (its patterns are recomputed per layer); a BERT ``Trace`` holds its patterns, so
    it is recomputed, a few matrix products, when asked."""
    if trace.n_tokens > ROLLOUT_FULL:
        raise ValueError(
            f"the whole rollout of {trace.n_tokens} tokens is not held (past {ROLLOUT_FULL}): "
            "use trace_rollout_pooled"
        )
    memo = getattr(trace, "memo", None)
    if memo is not None:
        result: F32 = memo("rollout", lambda: rollout_lqk(trace.pattern_lhqk))
        return result
    return rollout_lqk(trace.pattern_lhqk)
