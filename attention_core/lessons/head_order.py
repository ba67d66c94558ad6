"""The All heads page's arithmetic: which heads to show in which order, and the figures each head
is shown with: its score for every job a head is known to do (``methods.roles``: TransformerLens's
head detector and the pattern-only roles). (Long patterns are pooled into thumbnails by
attention_core.methods.pack.pool_blocks.)"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from attention_core.methods.roles import LABELS, RoleScores

# The roles the page sorts by (URL values), in the order its menu and table list them; a role
# a model does not have (the closing [SEP]'s "last_token" on a decoder) is left out.
SORTS = (
    "previous_token",
    "duplicate_token",
    "induction",
    "first_token",
    "last_token",
    "self",
    "broad",
)


def role_labels(scores: RoleScores) -> dict[str, str]:
    """Role key -> its label ("previous-token", "broad"…), for the roles ``scores`` holds."""
    return {role: LABELS[role] for role in SORTS if role in scores.scores_lh}


def role_figures(scores: RoleScores) -> dict[str, NDArray[np.float64]]:
    """Every role's score by label (``role_labels``), each [l, h], in ``SORTS`` order."""
    return {label: scores.scores_lh[role] for role, label in role_labels(scores).items()}


def order_heads(
    n_heads: int,
    layers: Sequence[int],
    top: int,
    values_lh: NDArray[np.floating] | None = None,
    descending: bool = True,
) -> NDArray[np.int64]:
    """Head numbers to draw for each chosen layer, [len(layers), top]: the first ``top`` heads in
    number order, or (given ``values_lh``) the first ``top`` ranked by those values per layer
    (a NaN, a score with nothing to measure, ranks last)."""
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
