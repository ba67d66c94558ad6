"""One measure of every head of a model as a grid (layers down, heads across), coloured on a
fixed [0, 1] scale with the yardstick's value named on the colour bar: the sink's share or the
reach of each head across a text."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from viz.common import PATTERN_SCALE, escape, figure


def make_head_measure_map(
    values_lh: NDArray[np.floating],
    measure: str,
    yardstick: float,
    title: str,
    distance_lh: NDArray[np.floating] | None = None,
) -> go.Figure:
    """[layers, heads] values in [0, 1] as a heatmap; hover names layer, head and value (and the
    distance in tokens when given); the colour bar marks ``yardstick`` (an even spread's value)."""
    v = np.asarray(values_lh, dtype=np.float64)
    if v.ndim != 2 or v.size == 0:
        raise ValueError(f"need values [layers, heads], got {v.shape}")
    if distance_lh is not None and np.shape(distance_lh) != v.shape:
        raise ValueError(f"distances {np.shape(distance_lh)} do not match values {v.shape}")
    n_layers, n_heads = v.shape
    extra = np.zeros_like(v) if distance_lh is None else np.asarray(distance_lh, np.float64)
    hover = f"layer %{{y}}, head %{{x}}<br>{escape(measure)} %{{z:.3f}}"
    if distance_lh is not None:
        hover += "<br>%{customdata:.0f} tokens back on average"
    heat = go.Heatmap(
        z=v,
        x=list(range(n_heads)),
        y=list(range(n_layers)),
        zmin=0.0,
        zmax=1.0,
        colorscale=PATTERN_SCALE,
        customdata=extra,
        hovertemplate=hover + "<extra></extra>",
        colorbar={
            "title": {"text": escape(measure)},
            "tickvals": [0.0, yardstick, 1.0],
            "ticktext": ["0", f"{yardstick:.2f} even spread", "1"],
        },
    )
    layout = {
        "xaxis": {"title": {"text": "head"}, "dtick": 1},
        "yaxis": {"title": {"text": "layer"}, "autorange": "reversed", "dtick": 5},
    }
    return figure([heat], layout, max(300, 16 * n_layers + 80), title)
