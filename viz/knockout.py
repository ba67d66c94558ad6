"""What knocking heads out does to one token's vector: the cosine between its vectors with and
without the heads, per hidden state (1 = unchanged), as a line."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from attention_core.core.config import ModelConfig
from viz.common import VERMILLION, base_layout, escape
from viz.embedding_shift import layer_name


def make_knockout_cosine(
    cosine_l: NDArray[np.floating],
    *,
    watched: str,
    height: int = 340,
    config: ModelConfig | None = None,
) -> go.Figure:
    """``cosine_l[L]`` is the cosine at hidden state L (0 the embedding, L after layer L − 1),
    named by ``layer_name(L, config)``."""
    cos = np.asarray(cosine_l, np.float64)
    if cos.ndim != 1 or not cos.size:
        raise ValueError(f"cosine_l must be one value per hidden state, got shape {cos.shape}")
    states = [layer_name(i, config) for i in range(cos.size)]
    fig = go.Figure(
        go.Scatter(
            x=states,
            y=cos,
            mode="lines+markers",
            marker_color=VERMILLION,
            line_color=VERMILLION,
            hovertemplate="%{x}<br>cosine %{y:.6f}<extra></extra>",
        )
    )
    fig.update_xaxes(
        title_text="hidden state (layer)",
        type="category",
        categoryorder="array",
        categoryarray=states,
    )
    fig.update_yaxes(title_text=escape(f"cosine of “{watched}”, with and without"))
    return base_layout(fig, height)
