"""Attention rollout (Abnar & Zuidema, ACL 2020): how much each token's vector after a layer
draws on each input token, following the weights through every layer below it.

Per layer l, ``A_l = 0.5 · (the heads' patterns averaged) + 0.5 · I``: the identity stands for
the residual connection, which carries each token's own vector past the attention. Then
``R_0 = A_0`` and ``R_l = A_l · R_(l-1)``. Each row of R_l sums to 1. It is an estimate, not a
measurement: it assumes every head counts the same, the residual counts as half, and it leaves
out LayerNorm, the MLPs and what the value vectors carry (``norm_weighted`` measures that).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from attention_core.core.family import Trace

F32 = NDArray[np.float32]


def rollout_lqk(pattern_lhqk: Any, layers: int | None = None) -> F32:
    """R_l for the first ``layers`` layers (default all), [l, t, t], accumulated in float64.
    ``pattern_lhqk`` is anything indexed by layer that gives [h, t, t] (an array, or a decoder
    trace's ``LayerStack``, which computes one layer at a time)."""
    n_layers = len(pattern_lhqk) if layers is None else layers
    if not 0 < n_layers <= len(pattern_lhqk):
        raise ValueError(f"layers must be in 1..{len(pattern_lhqk)}, got {layers}")
    first = np.asarray(pattern_lhqk[0])
    n = first.shape[-1]
    out = np.empty((n_layers, n, n), np.float32)
    half_eye = 0.5 * np.eye(n)
    reached = np.eye(n)
    for layer in range(n_layers):
        pattern_hqk = first if layer == 0 else np.asarray(pattern_lhqk[layer])
        mixed_qk = 0.5 * pattern_hqk.mean(axis=0, dtype=np.float64) + half_eye
        reached = mixed_qk @ reached
        out[layer] = reached
    return out


def trace_rollout(trace: Trace) -> F32:
    """``rollout_lqk`` of a trace's patterns: a decoder's ``LlamaTrace`` computes it once and
    keeps it (its patterns are recomputed per layer); a BERT ``Trace`` holds its patterns, so
    it is recomputed, a few matrix products, when asked."""
    memo = getattr(trace, "memo", None)
    if memo is not None:
        result: F32 = memo("rollout", lambda: rollout_lqk(trace.pattern_lhqk))
        return result
    return rollout_lqk(trace.pattern_lhqk)
