"""How far one token's vector moves when a word is hidden, per hidden state: grouped bars of the
distance between its vectors with and without the word, one group per hidden word."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from attention_core.core.config import ModelConfig
from viz.common import GREEN, SKY, VERMILLION, base_layout, escape
from viz.embedding_shift import layer_name

COLOURS = (VERMILLION, SKY, GREEN)  # the word asked about first


def make_word_effect(
    distance_by_word: Mapping[str, NDArray[np.floating]],
    cosine_by_word: Mapping[str, NDArray[np.floating]],
    length_l: NDArray[np.floating],
    *,
    watched: str,
    height: int = 380,
    config: ModelConfig | None = None,
) -> go.Figure:
    """``distance_by_word[w][L]`` is the distance between the watched token's vectors at hidden
    state L with and without word w, ``cosine_by_word[w][L]`` their cosine; ``length_l`` is the
    watched vector's length with every word visible (the hover reads the distance against it).
    States are named by ``layer_name(L, config)``."""
    length = np.asarray(length_l, np.float64)
    if list(distance_by_word) != list(cosine_by_word) or any(
        np.shape(v) != length.shape for v in [*distance_by_word.values(), *cosine_by_word.values()]
    ):
        raise ValueError(
            f"every word needs a distance and a cosine for each of {length.size} hidden states"
        )
    states = [layer_name(i, config) for i in range(length.size)]
    fig = go.Figure()
    for i, (word, distance) in enumerate(distance_by_word.items()):
        dist = np.asarray(distance, np.float64)
        cos = np.clip(np.asarray(cosine_by_word[word], np.float64), -1.0, 1.0)
        share = np.divide(dist, length, out=np.zeros_like(dist), where=length > 0)
        label = escape(f"“{word}” hidden")
        fig.add_trace(
            go.Bar(
                x=states,
                y=dist,
                name=label,
                marker_color=COLOURS[i % len(COLOURS)],
                customdata=np.column_stack([cos, np.degrees(np.arccos(cos)), share]),
                hovertemplate=f"{label}<br>%{{x}}<br>distance %{{y:.3f}} "
                "(%{customdata[2]:.0%} of "
                "the vector's length)<br>cosine %{customdata[0]:.4f} · angle %{customdata[1]:.1f}°"
                "<extra></extra>",
            )
        )
    fig.update_xaxes(
        title_text="hidden state (layer)",
        type="category",
        categoryorder="array",
        categoryarray=states,
    )
    fig.update_yaxes(title_text=escape(f"how far “{watched}” moved (distance)"), rangemode="tozero")
    fig.update_layout(barmode="group", legend={"orientation": "h", "y": 1.12, "x": 0})
    return base_layout(fig, height)
