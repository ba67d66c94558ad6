"""Position encodings as a heatmap: one row per position, one column per dimension."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from viz.common import SIGNED_SCALE, base_layout
from viz.learn_strip import robust_range


def make_positions(
    positions_td: NDArray[np.floating],
    *,
    n_dims: int | None = None,
    title: str | None = None,
    height: int | None = None,
) -> go.Figure:
    """Row p is the vector added for position p (0 = the first token, [CLS]); only the first
    ``n_dims`` dimensions are drawn when given. Colour is symmetric around 0 and
    saturates at the 99th percentile of |value|."""
    if positions_td.ndim != 2:
        raise ValueError(f"positions must be [positions, dims], got shape {positions_td.shape}")
    z = np.asarray(positions_td[:, :n_dims] if n_dims else positions_td, dtype=np.float32)
    top = robust_range(z)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=np.arange(z.shape[1]),
            y=np.arange(z.shape[0]),
            colorscale=SIGNED_SCALE,
            zmin=-top,
            zmax=top,
            colorbar={"thickness": 12, "len": 0.9},
            hovertemplate="position %{y}<br>dimension %{x}<br>value %{z:.4f}<extra></extra>",
        )
    )
    fig.update_xaxes(title_text="dimension", showgrid=False)
    fig.update_yaxes(title_text="position", autorange="reversed", showgrid=False)
    return base_layout(fig, height or min(520, max(240, 120 + 12 * z.shape[0])), title)
