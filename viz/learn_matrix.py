"""A small labelled matrix (e.g. the first dimensions of Q or K), every cell's value printed."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from viz.common import SIGNED_SCALE, base_layout, category_ticks, escape, token_categories


def make_small_matrix(
    values_rc: NDArray[np.floating],
    row_tokens: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: str | None = None,
    height: int | None = None,
) -> go.Figure:
    """Rows are tokens ("i:token" categories), columns are named by ``col_labels`` (e.g. "e0");
    each cell shows its value to two decimals, coloured on a scale symmetric around 0."""
    n_r, n_c = len(row_tokens), len(col_labels)
    if values_rc.shape != (n_r, n_c):
        raise ValueError(f"matrix shape {values_rc.shape} does not match {n_r}×{n_c} labels")
    z = np.asarray(values_rc, dtype=np.float32)
    top = float(np.abs(z).max()) or 1.0
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[escape(c) for c in col_labels],
            y=token_categories(row_tokens),
            colorscale=SIGNED_SCALE,
            zmin=-top,
            zmax=top,
            texttemplate="%{z:.2f}" if n_r <= 24 else None,
            colorbar={"thickness": 12, "len": 0.9},
            hovertemplate="token %{y}<br>%{x}<br>%{z:.4f}<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed", **category_ticks(row_tokens))
    return base_layout(fig, height or min(700, 110 + 24 * n_r), title)
