"""Vectors as colour strips: one row per vector, one column per dimension, colour = the value."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from viz.common import SIGNED_SCALE, base_layout, category_ticks, escape, token_categories

CLIP_PERCENTILE = 99.0  # colours saturate here, so a few huge dimensions do not wash out the rest


def robust_range(z: NDArray[np.floating]) -> float:
    """Half-width of a colour scale centred at 0: the 99th percentile of |z| (1 when all zero).
    Hover still shows every exact value."""
    top = float(np.percentile(np.abs(z), CLIP_PERCENTILE)) if z.size else 0.0
    return top if top > 0 else 1.0


def make_embedding_strip(
    vectors_nd: NDArray[np.floating],
    labels: Sequence[str],
    *,
    token_axis: bool = True,
    title: str | None = None,
    height: int | None = None,
) -> go.Figure:
    """Row i is vector i drawn as a strip of coloured cells: blue negative, red positive, on a
    scale symmetric around 0 that saturates at the 99th percentile of |value|. ``token_axis``
    labels rows as tokens ("i:token" categories, so repeated words keep their own row);
    otherwise ``labels`` are plain row names."""
    n = len(labels)
    if vectors_nd.ndim != 2 or vectors_nd.shape[0] != n:
        raise ValueError(f"vectors of shape {vectors_nd.shape} do not match {n} labels")
    z = np.asarray(vectors_nd, dtype=np.float32)
    rows = token_categories(labels) if token_axis else [escape(label) for label in labels]
    top = robust_range(z)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=np.arange(z.shape[1]),
            y=rows,
            colorscale=SIGNED_SCALE,
            zmin=-top,
            zmax=top,
            colorbar={"thickness": 12, "len": 0.9},
            hovertemplate="%{y}<br>dimension %{x}<br>value %{z:.4f}<extra></extra>",
        )
    )
    fig.update_xaxes(title_text=f"dimension (0–{z.shape[1] - 1})", showgrid=False)
    fig.update_yaxes(autorange="reversed", **(category_ticks(labels) if token_axis else {}))
    return base_layout(fig, height or min(700, 90 + 26 * n), title)
