"""A words × words attention table in the notes' convention: columns are the queries (the word
that attends), rows the keys; masked cells (a key after its query) read "0 · masked"."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from viz.common import PATTERN_SCALE, category_ticks, figure, token_categories


def make_word_table(
    weights_qk: NDArray[np.floating],
    words: Sequence[str],
    *,
    masked_qk: NDArray[np.bool_] | None = None,
    title: str | None = None,
) -> go.Figure:
    """``weights_qk`` has a row per query word (each sums to 1); it is drawn transposed, so each
    column is one query's weights over the keys, as in the notes."""
    n = len(words)
    w = np.asarray(weights_qk, dtype=np.float64)
    if w.shape != (n, n):
        raise ValueError(f"table shape {w.shape} does not match {n} words")
    masked = np.zeros((n, n), bool) if masked_qk is None else np.asarray(masked_qk, bool)
    text = np.where(masked.T, "0 · masked", np.vectorize(lambda v: f"{v:.2f}")(w.T))
    labels = token_categories(words)  # unique even when a word repeats
    heat = go.Heatmap(
        z=w.T,
        x=labels,
        y=labels,
        text=text,
        texttemplate="%{text}",
        colorscale=PATTERN_SCALE,
        zmin=0.0,
        zmax=1.0,
        hovertemplate="query %{x}<br>key %{y}<br>weight %{z:.4f}<extra></extra>",
        showscale=False,
    )
    layout = {
        "xaxis": {"title": {"text": "queries (attending)"}, "side": "top", **category_ticks(words)},
        "yaxis": {
            "title": {"text": "keys (attended to)"},
            "autorange": "reversed",
            **category_ticks(words),
        },
    }
    return figure([heat], layout, 140 + 60 * n, title)
