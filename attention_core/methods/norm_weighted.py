"""Norm-weighted attention (Kobayashi et al., EMNLP 2020, "Attention is not only a weight"):
how much each key token actually moves a query's vector, not only how much weight it gets.

Head h adds Σ_j pattern[i, j] · f_h(x_j) to token i, where f_h(x_j) is token j's value vector
(its key/value head's, under grouped-query attention) through head h's slice of the output
projection W_O (no output bias). A big weight on a token whose f_h(x_j) is short moves almost
nothing: ``norm_weighted[h, i, j] = pattern[h, i, j] · ‖f_h(x_j)‖`` is the length of what j
passes to i. The norms do not depend on the query, so a trace keeps them per key
(``value_norm_lhk``) and the browser multiplies them into any pattern it draws.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from attention_core.core.family import Trace
from attention_core.core.functional import gram_lhee, value_norms_gram

F32 = NDArray[np.float32]


def value_norms_hk(v_gke: NDArray[np.floating], w_o_hed: NDArray[np.floating]) -> F32:
    """‖v_j · W_O,h‖ for every head h and key j: [h, k]. ``v_gke`` holds g key/value heads
    (g = h without grouping; query head h reads KV head h // (h / g)), ``w_o_hed`` the heads'
    slices of W_O. Computed through each head's Gram matrix W_O,h · W_O,hᵀ ([e, e]), so the
    [h, k, d] vectors are never made; a forward pass keeps the Gram matrices from load and calls
    ``functional.value_norms_gram`` itself."""
    return value_norms_gram(np.asarray(v_gke, np.float32), gram_lhee(w_o_hed))


def norm_weighted_hqk(pattern_hqk: NDArray[np.floating], value_norm_hk: F32) -> F32:
    """One layer's patterns times each key's value norm: [h, q, k]."""
    return (np.asarray(pattern_hqk, np.float32) * value_norm_hk[:, None, :]).astype(np.float32)


def norm_weighted_lhqk(trace: Trace) -> F32:
    """Every layer's norm-weighted patterns, [L, H, t, t], for a ``Trace`` or ``LlamaTrace``
    (whose patterns are recomputed a layer at a time)."""
    norms = trace.value_norm_lhk
    return np.stack([norm_weighted_hqk(trace.pattern_lhqk[i], norms[i]) for i in range(len(norms))])
