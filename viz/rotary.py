"""How a similarity changes with the distance between two tokens: one line per curve, with an
optional shaded band (e.g. the spread over positions)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from viz.common import BLUE, GREEN, ORANGE, PURPLE, escape, figure

_COLOURS = (BLUE, ORANGE, GREEN, PURPLE)


def make_distance_curves(
    distances: NDArray[np.integer | np.floating],
    curves: Mapping[str, NDArray[np.floating]],
    *,
    bands: Mapping[str, tuple[NDArray[np.floating], NDArray[np.floating]]] | None = None,
    y_title: str = "similarity",
    title: str | None = None,
) -> go.Figure:
    """``curves`` maps a legend name to values at ``distances``; ``bands`` maps the same names to
    (low, high) values drawn as a shaded range behind that curve."""
    x = np.asarray(distances)
    data = []
    for i, (name, values) in enumerate(curves.items()):
        if np.shape(values) != x.shape:
            raise ValueError(f"curve {name!r} has shape {np.shape(values)}, distances {x.shape}")
        colour = _COLOURS[i % len(_COLOURS)]
        if bands and name in bands:
            low, high = bands[name]
            data.append(
                go.Scatter(
                    x=np.concatenate([x, x[::-1]]),
                    y=np.concatenate([high, low[::-1]]),
                    fill="toself",
                    fillcolor=colour,
                    opacity=0.2,
                    line={"width": 0},
                    hoverinfo="skip",
                    showlegend=False,
                )
            )
        data.append(
            go.Scatter(
                x=x,
                y=np.asarray(values, dtype=np.float64),
                mode="lines",
                name=escape(name),
                line={"color": colour, "width": 2},
                hovertemplate=f"{escape(name)}<br>distance %{{x}}<br>%{{y:.4f}}<extra></extra>",
            )
        )
    layout = {
        "xaxis": {"title": {"text": "distance Δ (tokens between query and key)"}},
        "yaxis": {"title": {"text": y_title}, "zeroline": True},
        "legend": {"orientation": "h", "y": -0.25},
    }
    return figure(data, layout, 380, title)
