"""The model's top guesses for the next token, as horizontal bars of probability."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from viz.common import BLUE, ORANGE, figure, token_categories

_BAR_HEIGHT = 26  # pixels per guess


def make_next_token_bars(
    tokens: Sequence[str],
    probs_k: NDArray[np.floating],
    *,
    chosen: int | None = None,
    title: str | None = None,
) -> go.Figure:
    """One bar per candidate (most likely on top): its probability under the model's softmax over
    the whole vocabulary. ``chosen`` (an index into ``tokens``) is drawn in orange."""
    probs = np.asarray(probs_k, dtype=np.float64)
    if probs.shape != (len(tokens),):
        raise ValueError(
            f"{probs.shape[0] if probs.ndim else 0} probabilities for {len(tokens)} tokens"
        )
    cats = token_categories(tokens)  # unique per rank, even when two pieces print alike
    colours = [ORANGE if i == chosen else BLUE for i in range(len(tokens))]
    bars = go.Bar(
        x=probs,
        y=cats,
        orientation="h",
        marker={"color": colours},
        text=[f"{p:.1%}" for p in probs],
        textposition="outside",
        cliponaxis=False,
        hovertemplate="next token %{y}<br>probability %{x:.4f}<extra></extra>",
    )
    ticks = {"tickmode": "array", "tickvals": cats, "ticktext": [c.split(":", 1)[1] for c in cats]}
    layout = {
        "xaxis": {
            "title": {"text": "probability"},
            "range": [0, min(1.0, probs.max() * 1.25 + 0.02)],
        },
        "yaxis": {"autorange": "reversed", "title": {"text": "next token"}, **ticks},
        "showlegend": False,
    }
    return figure([bars], layout, 80 + _BAR_HEIGHT * len(tokens), title)
