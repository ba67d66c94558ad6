"""Cosine similarity per hidden state (the embedding, then after each layer, layers counted from
0), one line per series: a token against each probe word, or one word against the same word in
another sentence."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from attention_core.core.config import ModelConfig
from viz.common import (
    BLACK,
    BLUE,
    GREEN,
    ORANGE,
    PURPLE,
    SKY,
    VERMILLION,
    YELLOW,
    base_layout,
    escape,
)
from viz.embedding_shift import layer_name

# Okabe-Ito, colour-blind safe, in a fixed order so a probe keeps its colour across charts
COLOURS = (ORANGE, SKY, GREEN, PURPLE, BLUE, VERMILLION, YELLOW, BLACK)


def make_layer_similarity(
    cosine_by_name: Mapping[str, NDArray[np.floating]],
    *,
    title: str | None = None,
    mark_layer: int | None = None,
    height: int = 380,
    config: ModelConfig | None = None,
) -> go.Figure:
    """``cosine_by_name[name][L]`` is the cosine at hidden state L, named by ``layer_name(L,
    config)``. ``mark_layer`` draws a dotted line at that hidden state (the layer chosen in the
    sidebar)."""
    lengths = {len(v) for v in cosine_by_name.values()}
    if len(lengths) > 1:
        raise ValueError(f"every series needs the same number of layers, got {sorted(lengths)}")
    fig = go.Figure()
    for i, (name, values) in enumerate(cosine_by_name.items()):
        label = escape(name)
        fig.add_trace(
            go.Scatter(
                x=np.arange(len(values)),
                y=np.asarray(values, np.float64),
                mode="lines+markers",
                name=label,
                line={"color": COLOURS[i % len(COLOURS)], "width": 2},
                customdata=[layer_name(i, config) for i in range(len(values))],
                hovertemplate=f"{label}<br>%{{customdata}}: cosine %{{y:.4f}}<extra></extra>",
            )
        )
    n = lengths.pop() if lengths else 0
    fig.update_xaxes(
        title_text="hidden state",
        tickmode="array",
        tickvals=list(range(n)),
        ticktext=[layer_name(i, config) for i in range(n)],
    )
    fig.update_yaxes(title_text="cosine similarity")
    if mark_layer is not None:
        fig.add_vline(x=mark_layer, line={"dash": "dot", "width": 1, "color": "gray"})
    fig.update_layout(legend={"orientation": "h", "y": -0.25, "x": 0}, hovermode="x unified")
    return base_layout(fig, height, title)
