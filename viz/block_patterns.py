"""Small multiples: one attention-pattern heatmap per head of a built block, on one colour scale."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from numpy.typing import NDArray
from plotly.subplots import make_subplots

from viz.common import PATTERN_SCALE, base_layout, category_ticks, finite, token_categories

MAX_COLS = 4  # heads per row
_LABELS_PER_AXIS = (24, 16)  # token labels per axis with 1–2 / 3–4 panels a row (small panels)
_HOVER = "query %{y}<br>key %{x}<br>weight %{z:.4f}<extra></extra>"
_NUMBERS_UP_TO = 6  # print each cell's weight when the sentence is this short


def _grid(n_heads: int) -> tuple[int, int]:
    cols = min(MAX_COLS, n_heads)
    return -(-n_heads // cols), cols


def make_block_patterns(
    pattern_hqk: NDArray, tokens: Sequence[str], *, panel_height: int = 280
) -> go.Figure:
    """One heatmap per head (rows queries, columns keys), ``MAX_COLS`` to a row, sharing the
    0..1 Cividis scale so heads compare at a glance."""
    n_heads, n_q, n_k = pattern_hqk.shape
    if n_q != len(tokens) or n_k != len(tokens):
        raise ValueError(f"patterns of shape {pattern_hqk.shape} do not match {len(tokens)} tokens")
    rows, cols = _grid(n_heads)
    fig = make_subplots(
        rows=rows, cols=cols, subplot_titles=[f"head {h}" for h in range(n_heads)],
        horizontal_spacing=0.03, vertical_spacing=0.3 / rows,
    )  # fmt: skip
    cats = token_categories(tokens)
    for h in range(n_heads):
        fig.add_trace(
            go.Heatmap(
                z=finite(pattern_hqk[h]),
                x=cats,
                y=cats,
                coloraxis="coloraxis",
                name=f"head {h}",
                hovertemplate=f"head {h}<br>{_HOVER}",
                texttemplate="%{z:.2f}" if len(tokens) <= _NUMBERS_UP_TO else None,
            ),
            row=h // cols + 1,
            col=h % cols + 1,
        )
    ticks = category_ticks(tokens, max_labels=_LABELS_PER_AXIS[cols > 2])
    tickfont = {"size": 10 if cols > 2 else 12}
    fig.update_xaxes(tickangle=-45, side="bottom", tickfont=tickfont, **ticks)
    fig.update_yaxes(autorange="reversed", tickfont=tickfont, **ticks)
    # every panel has the same tokens: label the rows once, left of each row of panels
    for h in range(n_heads):
        if h % cols:
            fig.layout[f"yaxis{h + 1}"].showticklabels = False
    fig.update_layout(
        coloraxis={
            "colorscale": PATTERN_SCALE, "cmin": 0.0, "cmax": 1.0,
            "colorbar": {"title": {"text": "weight"}, "thickness": 12, "len": 0.8},
        }
    )  # fmt: skip
    base_layout(fig, panel_height * rows + 40)
    return fig.update_layout(margin_t=36)  # room for the head titles above the top row
