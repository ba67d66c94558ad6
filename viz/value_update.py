"""One token's attention weights over the keys, as bars: the a_j in z = Σ_j a_j V_j."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from viz.common import BLUE, ORANGE, base_layout, category_ticks, token_categories

_NUMBERS_UP_TO = 16  # print each bar's weight when there are this few keys
BAR = BLUE
QUERY = ORANGE  # the query token's own bar


def make_value_update(
    weights_k: NDArray[np.floating],
    v_norms_k: NDArray[np.floating],
    tokens: Sequence[str],
    query: int | None = None,
    *,
    title: str | None = None,
    height: int = 320,
) -> go.Figure:
    """Bars of the weight a_j the query token gives each key j, with ‖V_j‖ and the size of a_j·V_j
    in the hover; the bar of ``query`` (an index into ``tokens``) is orange."""
    n = len(tokens)
    if weights_k.shape != (n,) or v_norms_k.shape != (n,):
        raise ValueError(f"weights {weights_k.shape} / norms {v_norms_k.shape} for {n} tokens")
    weights = np.asarray(weights_k, dtype=np.float32)
    norms = np.asarray(v_norms_k, dtype=np.float32)
    colours = [BAR] * n
    if query is not None:
        colours[query] = QUERY
    fig = go.Figure(
        go.Bar(
            x=token_categories(tokens),
            y=weights,
            customdata=np.column_stack([norms, weights * norms]),
            marker={"color": colours},
            texttemplate="%{y:.2f}" if n <= _NUMBERS_UP_TO else None,
            textposition="outside",
            hovertemplate="key %{x}<br>weight a<sub>j</sub> %{y:.4f}<br>‖V<sub>j</sub>‖ "
            "%{customdata[0]:.3f}<br>‖a<sub>j</sub>·V<sub>j</sub>‖ %{customdata[1]:.3f}"
            "<extra></extra>",
        )
    )
    fig.update_xaxes(
        title_text="keys j (the tokens being looked at)", tickangle=-45, **category_ticks(tokens)
    )
    fig.update_yaxes(
        title_text="weight a_j", range=[0, min(1.05, float(weights.max()) * 1.2 + 0.02)]
    )
    return base_layout(fig, height, title)
