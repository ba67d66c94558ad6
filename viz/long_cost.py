"""What a longer text costs SmolLM2, measured and fitted: the forward pass's time with its fitted
a·n + b·n² + c and that fit's n² part, and the bytes the trace holds beside the bytes of every
pattern it does not hold."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray
from plotly.subplots import make_subplots

from attention_core.lessons.cost import CostFit
from viz.common import BLUE, GREY, ORANGE, VERMILLION, base_layout

MEASURED, FITTED, SQUARE_PART, NOT_HELD = BLUE, ORANGE, VERMILLION, GREY


def _line(
    x: NDArray[np.float64],
    y: NDArray[np.float64],
    name: str,
    colour: str,
    dash: str,
    unit: str,
    mode: str = "lines",
) -> go.Scatter:
    return go.Scatter(
        x=x,
        y=y,
        mode=mode,
        name=name,
        line={"color": colour, "dash": dash},
        marker={"size": 9},
        hovertemplate=f"{name}<br>%{{x:.0f}} tokens<br>%{{y:.3g}} {unit}<extra></extra>",
    )


def make_long_cost(
    n_tokens: NDArray[np.integer],
    seconds: NDArray[np.floating],
    time_fit: CostFit,
    held_bytes: NDArray[np.integer],
    memory_fit: CostFit,
    pattern_bytes: NDArray[np.integer],
) -> go.Figure:
    """Two panels over the token count n (linear axes, so n² bends upward): time (s) measured,
    its fit and the fit's n² part; memory (MB) the trace holds measured, its fit, and every
    layer's and head's patterns (not held: recomputed a layer at a time)."""
    n = np.asarray(n_tokens, dtype=np.float64)
    if n.size == 0 or not (n.shape == np.shape(seconds) == np.shape(held_bytes)):
        raise ValueError(
            f"sizes {n.shape}, times {np.shape(seconds)}, bytes {np.shape(held_bytes)}"
        )
    if np.shape(pattern_bytes) != n.shape:
        raise ValueError(f"sizes {n.shape}, pattern bytes {np.shape(pattern_bytes)}")
    grid = np.linspace(0.0, float(n.max()), 64)
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.12,
        subplot_titles=("forward pass time (s)", "memory (MB)"),
    )
    time_lines = (
        _line(n, np.asarray(seconds, np.float64), "measured", MEASURED, "solid", "s", "markers"),
        _line(grid, time_fit(grid), "fit a·n + b·n² + c", FITTED, "solid", "s"),
        _line(grid, time_fit.b * grid**2, "its n² part b·n²", SQUARE_PART, "dot", "s"),
    )
    memory_lines = (
        _line(
            n, np.asarray(held_bytes) / 1e6, "the trace holds", MEASURED, "solid", "MB", "markers"
        ),
        _line(grid, memory_fit(grid) / 1e6, "fit of what it holds", FITTED, "solid", "MB"),
        _line(
            n,
            np.asarray(pattern_bytes) / 1e6,
            "every pattern (not held)",
            NOT_HELD,
            "dash",
            "MB",
            "lines+markers",
        ),
    )
    for col, lines in enumerate((time_lines, memory_lines), start=1):
        for line in lines:
            fig.add_trace(line, row=1, col=col)
    return _axes(fig, n)


def _axes(fig: go.Figure, n: NDArray[np.float64]) -> go.Figure:
    ticks = [int(v) for v in n]
    fig.update_xaxes(tickvals=ticks, title_text="tokens n", range=[0, float(n.max()) * 1.04])
    fig.update_yaxes(rangemode="tozero")
    base_layout(fig, 400)
    fig.update_layout(legend={"orientation": "h", "y": -0.3, "x": 0}, margin={"t": 40})
    return fig
