"""One attention matrix (raw, scaled, masked scores or the softmax pattern) as a heatmap."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from viz.common import (
    PATTERN_SCALE,
    SIGNED_SCALE,
    category_ticks,
    figure,
    finite,
    token_categories,
)

Stage = Literal["scores", "scaled", "masked", "pattern"]
STAGE_TITLES = {
    "scores": "Q·Kᵀ (raw scores)",
    "scaled": "scaled ÷√d_k",
    "masked": "masked",
    "pattern": "softmax pattern",
}
PLURAL = {"query": "queries (attending)", "key": "keys (attended to)"}
_NUMBERS_UP_TO = 12  # print each cell's value when the sentence is this short


def make_pattern_heatmap(
    values_qk: NDArray[np.floating],
    tokens: Sequence[str],
    *,
    stage: Stage = "pattern",
    transpose: bool = False,
    title: str | None = None,
    height: int | None = None,
    numbers: bool = True,
) -> go.Figure:
    """Rows are queries (the attending token) and columns keys; ``transpose`` swaps them, the
    column convention of the 3Blue1Brown notes. Masked (-inf) cells are left blank. With
    ``numbers``, a sentence of up to 12 tokens gets each cell's value printed in it (hover always
    shows it); those labels are most of the browser's drawing time for a small heatmap."""
    n = len(tokens)
    if values_qk.shape != (n, n):
        raise ValueError(f"matrix shape {values_qk.shape} does not match {n} tokens")
    z = finite(values_qk.T if transpose else values_qk)
    cats = token_categories(tokens)
    row_name, col_name = ("key", "query") if transpose else ("query", "key")
    colour = (
        {"colorscale": PATTERN_SCALE, "zmin": 0.0, "zmax": 1.0}
        if stage == "pattern"
        else {"colorscale": SIGNED_SCALE, "zmid": 0.0}
    )
    ticks = category_ticks(tokens)
    heatmap = go.Heatmap(
        z=z,
        x=cats,
        y=cats,
        hoverongaps=False,
        hovertemplate=f"{row_name} %{{y}}<br>{col_name} %{{x}}<br>%{{z:.4f}}<extra></extra>",
        texttemplate="%{z:.2f}" if numbers and n <= _NUMBERS_UP_TO else None,
        colorbar={"thickness": 12, "len": 0.9},
        **colour,
    )
    layout = {
        "xaxis": {"title": {"text": PLURAL[col_name]}, "side": "top", "tickangle": -45, **ticks},
        "yaxis": {"title": {"text": PLURAL[row_name]}, "autorange": "reversed", **ticks},
    }
    size = height or min(900, max(260, 140 + 18 * n))
    return figure([heatmap], layout, size, title or STAGE_TITLES[stage])
