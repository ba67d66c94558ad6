"""Sizes of update vectors as bars: ‖ΔE_h‖ for every head, or ‖ΔE‖ for every token."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from viz.common import BLUE, ORANGE, base_layout, category_ticks, escape, token_categories

BAR = BLUE
HIGHLIGHT = ORANGE  # the chosen head or token


def make_norm_bars(
    norms_n: NDArray[np.floating],
    labels: Sequence[str],
    *,
    token_axis: bool = False,
    highlight: int | None = None,
    x_title: str = "",
    y_title: str = "size ‖·‖",
    title: str | None = None,
    height: int = 300,
) -> go.Figure:
    """One bar per label; ``token_axis`` treats labels as tokens (unique "i:token" categories,
    ticks show the bare tokens). The bar at index ``highlight`` is drawn in orange."""
    n = len(labels)
    if norms_n.shape != (n,):
        raise ValueError(f"{norms_n.shape} sizes for {n} labels")
    colours = [BAR] * n
    if highlight is not None:
        colours[highlight] = HIGHLIGHT
    x = token_categories(labels) if token_axis else [escape(label) for label in labels]
    fig = go.Figure(
        go.Bar(
            x=x,
            y=np.asarray(norms_n, dtype=np.float32),
            marker={"color": colours},
            hovertemplate=f"%{{x}}<br>{escape(y_title)} %{{y:.4f}}<extra></extra>",
        )
    )
    fig.update_xaxes(title_text=escape(x_title), **(category_ticks(labels) if token_axis else {}))
    fig.update_yaxes(title_text=escape(y_title), rangemode="tozero")
    return base_layout(fig, height, title)
