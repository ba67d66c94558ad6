"""Where one layer's time goes at each length: attention (Q·Kᵀ, softmax, pattern·V) versus
the dense layers (the Q, K, V and output projections and the feed-forward), as stacked shares."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from viz.common import BLUE, VERMILLION, base_layout

ATTENTION = VERMILLION
DENSE = BLUE


def make_cost_split(
    n_tokens: NDArray[np.integer], attention_s: NDArray[np.floating], dense_s: NDArray[np.floating]
) -> go.Figure:
    """One stacked bar per length: the percentage of a layer's measured time spent in attention
    and in the dense layers (the two add to 100); hover shows the milliseconds."""
    n = np.asarray(n_tokens)
    att, dense = np.asarray(attention_s, np.float64), np.asarray(dense_s, np.float64)
    if not (n.shape == att.shape == dense.shape) or n.size == 0:
        raise ValueError(f"sizes {n.shape}, attention {att.shape}, dense {dense.shape}")
    total = att + dense
    x = [str(int(v)) for v in n]
    fig = go.Figure()
    for name, part, colour in (("attention", att, ATTENTION), ("dense layers", dense, DENSE)):
        fig.add_trace(
            go.Bar(
                x=x,
                y=100 * part / total,
                name=name,
                marker={"color": colour},
                customdata=part * 1e3,
                hovertemplate=f"{name}<br>%{{x}} tokens<br>%{{y:.0f}}% of the layer"
                "<br>%{customdata:.2f} ms<extra></extra>",
            )
        )
    fig.update_layout(barmode="stack", legend={"orientation": "h", "y": -0.25, "x": 0})
    fig.update_xaxes(title_text="tokens n", type="category")
    fig.update_yaxes(title_text="share of one layer's time (%)", range=[0, 100])
    return base_layout(fig, 340, "one layer's time: attention vs dense layers")
