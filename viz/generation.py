"""One generation step: the new token's attention over every earlier token, one row per head,
the heads grouped by the key/value head they share."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from numpy.typing import NDArray

from viz.common import PATTERN_SCALE, category_ticks, figure, finite, token_categories

_NUMBERS_UP_TO = 16  # print each weight in its cell up to this many tokens


def head_labels(n_heads: int, group_size: int) -> list[str]:
    """ "H4 · KV1": query head 4 reads key/value head 1 (heads numbered from 0, as elsewhere)."""
    return [f"H{h} · KV{h // group_size}" for h in range(n_heads)]


def make_step_heatmap(
    pattern_hk: NDArray,
    tokens: Sequence[str],
    group_size: int,
    *,
    n_prompt: int | None = None,
    title: str | None = None,
) -> go.Figure:
    """Rows are query heads, columns the keys (every token up to and including the new one).
    White lines separate the key/value groups; a dotted line ends the prompt."""
    n_heads, n = pattern_hk.shape
    if n != len(tokens):
        raise ValueError(f"pattern has {n} keys but {len(tokens)} tokens were given")
    if group_size <= 0 or n_heads % group_size:
        raise ValueError(f"{n_heads} heads cannot form groups of {group_size}")
    labels = head_labels(n_heads, group_size)
    heat = go.Heatmap(
        z=finite(pattern_hk),
        x=token_categories(tokens),
        y=labels,
        colorscale=PATTERN_SCALE,
        zmin=0.0,
        zmax=1.0,
        texttemplate="%{z:.2f}" if n <= _NUMBERS_UP_TO else None,
        hovertemplate="head %{y}<br>key %{x}<br>weight %{z:.4f}<extra></extra>",
        colorbar={"thickness": 12, "len": 0.9},
    )
    line = {"color": "white", "width": 3}
    shapes = [
        {"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": g - 0.5, "y1": g - 0.5,
         "line": line}
        for g in range(group_size, n_heads, group_size)
    ]  # fmt: skip
    if n_prompt is not None and 0 < n_prompt < n:
        shapes.append({"type": "line", "yref": "paper", "y0": 0, "y1": 1, "x0": n_prompt - 0.5,
                       "x1": n_prompt - 0.5, "line": {"color": "#E69F00", "dash": "dot",
                       "width": 2}})  # fmt: skip
    layout = {
        "xaxis": {"title": {"text": "keys: the tokens so far"}, "side": "top", "tickangle": -45,
                  **category_ticks(tokens)},
        "yaxis": {"title": {"text": "query heads"}, "autorange": "reversed"},
        "shapes": shapes,
    }  # fmt: skip
    return figure([heat], layout, 150 + 30 * n_heads, title)
