"""Cross-attention heatmap: target tokens (queries) as rows, source tokens (keys) as columns."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from viz.common import PATTERN_SCALE, base_layout, category_ticks, finite, token_categories

_NUMBERS_UP_TO = 14  # print each cell's weight when both sentences are this short


def make_cross_pattern(
    pattern_qk: NDArray[np.floating],
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    title: str | None = None,
    height: int | None = None,
) -> go.Figure:
    """Weights in [0, 1] (each row sums to 1); rows and columns may differ in length, as the
    target (queries) and the source (keys and values) are different sentences."""
    n_q, n_k = len(query_tokens), len(key_tokens)
    if pattern_qk.shape != (n_q, n_k):
        raise ValueError(f"pattern shape {pattern_qk.shape} does not match {n_q}×{n_k} tokens")
    fig = go.Figure(
        go.Heatmap(
            z=finite(pattern_qk),
            x=token_categories(key_tokens),
            y=token_categories(query_tokens),
            colorscale=PATTERN_SCALE,
            zmin=0.0,
            zmax=1.0,
            hoverongaps=False,
            texttemplate="%{z:.2f}" if max(n_q, n_k) <= _NUMBERS_UP_TO else None,
            colorbar={"thickness": 12, "len": 0.9},
            hovertemplate="target (query) %{y}<br>source (key) %{x}<br>%{z:.4f}<extra></extra>",
        )
    )
    fig.update_xaxes(
        title_text="source tokens (keys, values)",
        side="top",
        tickangle=-45,
        **category_ticks(key_tokens),
    )
    fig.update_yaxes(
        title_text="target tokens (queries)", autorange="reversed", **category_ticks(query_tokens)
    )
    return base_layout(fig, height or min(800, max(260, 160 + 22 * n_q)), title)
