"""How big each head's proposed update ΔE_h is, per token, next to the combined ΔE."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from viz.common import PATTERN_SCALE, base_layout, category_ticks, finite, token_categories

COMBINED = "ΔE (all heads)"
_NUMBERS_UP_TO = 12  # print each cell's size when the sentence is this short


def make_head_deltas(
    head_norm_ht: NDArray[np.floating], delta_norm_t: NDArray[np.floating], tokens: Sequence[str]
) -> go.Figure:
    """Heatmap of ‖ΔE_h‖ for every head (rows) and token (columns), with a last row for the
    length of the combined update ΔE. Proposals can cancel, so that row can be shorter than
    the sum of the rows above it."""
    n_heads, n_tokens = head_norm_ht.shape
    if n_tokens != len(tokens) or delta_norm_t.shape != (n_tokens,):
        raise ValueError(
            f"sizes {head_norm_ht.shape} and {delta_norm_t.shape} do not match {len(tokens)} tokens"
        )
    rows = [f"head {h}" for h in range(n_heads)] + [COMBINED]
    z = finite(np.vstack([head_norm_ht, delta_norm_t[None, :]]))
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=token_categories(tokens),
            y=rows,
            colorscale=PATTERN_SCALE,
            zmin=0.0,
            zmax=max(float(z.max()), 1e-6),  # both ends fixed, so the scale starts at 0
            hovertemplate="%{y}<br>token %{x}<br>‖update‖ = %{z:.4f}<extra></extra>",
            texttemplate="%{z:.2f}" if n_tokens <= _NUMBERS_UP_TO else None,
            colorbar={"title": {"text": "length"}, "thickness": 12, "len": 0.9},
        )
    )
    fig.update_xaxes(
        title_text="token (the one being updated)", tickangle=-45, **category_ticks(tokens)
    )
    fig.update_yaxes(autorange="reversed")
    return base_layout(fig, min(520, 140 + 28 * len(rows)))
