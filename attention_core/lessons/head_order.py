"""The All heads page's arithmetic: which heads to show in which order, and their summary
figures. (Long patterns are pooled into thumbnails by attention_core.methods.pack.pool_blocks.)"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from attention_core.lessons.explain import HeadSummary

# Sort keys (URL values) -> (label, HeadSummary field). Every figure is averaged over query rows.
METRICS = {
    "entropy": ("entropy (bits)", "entropy_lh"),
    "special": ("share on [CLS]/[SEP]", "special_share_lh"),
    "previous": ("previous-token share", "previous_share_lh"),
    "diagonal": ("share on itself (diagonal)", "diagonal_share_lh"),
    "max": ("largest weight in a row", "max_weight_lh"),
}


SINK_LABEL = "share on the first token"  # a decoder's "special" share: it has no [CLS]/[SEP]


def metric_labels(causal: bool) -> dict[str, str]:
    """Sort key -> display label; a decoder's "special" share is its first token's (where most
    of its heads park their weight), as it has no [CLS]/[SEP]."""
    labels = {key: label for key, (label, _) in METRICS.items()}
    return labels | {"special": SINK_LABEL} if causal else labels


def sink_t(special_t: NDArray[np.bool_], causal: bool) -> NDArray[np.bool_]:
    """The tokens the "special" share counts: [CLS]/[SEP], or a decoder's first token."""
    if not causal:
        return special_t
    first = np.zeros_like(special_t)
    first[:1] = True
    return first


def head_metrics(summary: HeadSummary, causal: bool = False) -> dict[str, NDArray[np.float32]]:
    """The summary figures by display label (``metric_labels``), each [l, h], in METRICS order."""
    labels = metric_labels(causal)
    return {labels[key]: getattr(summary, name) for key, (_, name) in METRICS.items()}


def order_heads(
    n_heads: int,
    layers: Sequence[int],
    top: int,
    values_lh: NDArray[np.floating] | None = None,
    descending: bool = True,
) -> NDArray[np.int64]:
    """Head numbers to draw for each chosen layer, [len(layers), top]: the first ``top`` heads in
    number order, or (given ``values_lh``) the first ``top`` ranked by those values per layer."""
    if not 1 <= top <= n_heads:
        raise ValueError(f"top must be in 1..{n_heads}, got {top}")
    if values_lh is None:
        return np.tile(np.arange(top), (len(layers), 1))
    rows = np.asarray(values_lh, dtype=np.float64)[list(layers)]
    ranked = np.argsort(-rows if descending else rows, axis=1, kind="stable")
    return np.ascontiguousarray(ranked[:, :top])


def list_heads(
    order_rh: NDArray[np.integer],
    layers: Sequence[int],
    values_lh: NDArray[np.floating] | None = None,
    descending: bool = True,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The drawn heads as (layer, head) lists: layer by layer, or ranked by ``values_lh`` over
    all of them (ties keep layer order)."""
    layer_n = np.repeat(np.asarray(layers, dtype=np.int64), order_rh.shape[1])
    head_n = np.asarray(order_rh, dtype=np.int64).ravel()
    if values_lh is None:
        return layer_n, head_n
    values = np.asarray(values_lh, dtype=np.float64)[layer_n, head_n]
    rank = np.argsort(-values if descending else values, kind="stable")
    return layer_n[rank], head_n[rank]
