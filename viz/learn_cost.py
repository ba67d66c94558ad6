"""Measured cost against context length, next to the pure n² curve: time and attention memory."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray
from plotly.subplots import make_subplots

from attention_core import square_law
from viz.common import BLUE, VERMILLION, base_layout

MEASURED = BLUE
SQUARE = VERMILLION  # also dashed


def make_cost_curve(
    n_tokens: NDArray[np.integer], seconds: NDArray[np.floating], nbytes: NDArray[np.integer]
) -> go.Figure:
    """Two log-log panels over token count: forward time (ms) and bytes of scores + pattern (MB).
    Each shows the measurement and c·n² through its largest point (dashed): on log axes n²
    is a straight line of slope 2, so a measurement running parallel to it grows as n²."""
    n = np.asarray(n_tokens, dtype=np.float64)
    if not (n.shape == np.shape(seconds) == np.shape(nbytes)) or n.size == 0:
        raise ValueError(f"sizes {n.shape}, times {np.shape(seconds)}, bytes {np.shape(nbytes)}")
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.12,
        subplot_titles=("forward pass time (ms)", "scores + pattern memory (MB)"),
    )
    panels = ((np.asarray(seconds) * 1e3, "ms"), (np.asarray(nbytes) / 1e6, "MB"))
    for col, (values, unit) in enumerate(panels, start=1):
        for name, y, colour, dash, mode in (
            ("measured", values, MEASURED, "solid", "lines+markers"),
            ("c·n² (through the last point)", square_law(n, values), SQUARE, "dash", "lines"),
        ):
            fig.add_trace(
                go.Scatter(
                    x=n,
                    y=np.asarray(y, dtype=np.float64),
                    mode=mode,
                    name=name,
                    legendgroup=name,
                    showlegend=col == 1,
                    line={"color": colour, "dash": dash},
                    hovertemplate=f"{name}<br>%{{x}} tokens<br>%{{y:.3g}} {unit}<extra></extra>",
                ),
                row=1,
                col=col,
            )
    ticks = [int(v) for v in n]
    fig.update_xaxes(
        type="log", tickvals=ticks, ticktext=[str(t) for t in ticks], title_text="tokens n"
    )
    fig.update_yaxes(type="log")
    base_layout(fig, 400)
    fig.update_layout(legend={"orientation": "h", "y": -0.3, "x": 0}, margin={"t": 40})
    return fig
