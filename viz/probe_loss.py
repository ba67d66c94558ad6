"""The induction probe's per-token loss: the first copy of a random run, its second copy, and the
second copy again with some heads switched off (a what-if), over the position in the copy."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from viz.common import BLUE, ORANGE, VERMILLION, figure

FIRST, SECOND, KNOCKED = ORANGE, BLUE, VERMILLION  # the knocked-out line also dashed


def make_probe_loss(
    loss_t: NDArray[np.floating],
    knocked_t: NDArray[np.floating] | None = None,
    knocked_name: str = "second copy, heads switched off (what-if)",
    title: str | None = None,
) -> go.Figure:
    """``loss_t`` [2n]: −log p of each token of a run of n read twice (NaN where nothing comes
    before it) as two lines over the position in the copy, first and second; ``knocked_t`` [2n]
    adds the second copy's loss under a what-if, dashed."""
    loss = np.asarray(loss_t, dtype=np.float64)
    if loss.ndim != 1 or loss.size < 2 or loss.size % 2:
        raise ValueError(f"expected the loss of a run read twice, [2n], got shape {loss.shape}")
    n = loss.size // 2
    x = np.arange(n)
    lines = [("first copy", loss[:n], FIRST, "solid"), ("second copy", loss[n:], SECOND, "solid")]
    if knocked_t is not None:
        knocked = np.asarray(knocked_t, dtype=np.float64)
        if knocked.shape != loss.shape:
            raise ValueError(f"knocked-out loss {knocked.shape} differs from {loss.shape}")
        lines.append((knocked_name, knocked[n:], KNOCKED, "dash"))
    data = [
        go.Scatter(
            x=x,
            y=y,
            mode="lines",
            name=name,
            line={"color": colour, "dash": dash},
            hovertemplate=f"{name}<br>token %{{x}} of the copy<br>loss %{{y:.2f}}<extra></extra>",
        )
        for name, y, colour, dash in lines
    ]
    layout = {
        "xaxis": {"title": {"text": "position in the copy"}},
        "yaxis": {
            "title": {"text": "loss, −log p (lower: better predicted)"},
            "rangemode": "tozero",
        },
        "legend": {"orientation": "h", "y": -0.25, "x": 0},
    }
    return figure(data, layout, height=340, title=title)
