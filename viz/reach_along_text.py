"""How the sink's share and the heads' reach change along a text: per bin of query positions,
the median over every head, one chosen head, and an even spread's value (the yardstick)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray
from plotly.subplots import make_subplots

from viz.common import BLUE, GREY, VERMILLION, base_layout


def _line(
    x: NDArray[np.float64],
    y: NDArray[np.floating],
    span: NDArray[np.float64],
    label: str,
    colour: str,
    dash: str,
    legend: bool,
) -> go.Scatter:
    """One series over the bins' middles; hover names the bin's first and last query."""
    return go.Scatter(
        x=x,
        y=np.asarray(y, dtype=np.float64),
        mode="lines+markers",
        name=label,
        legendgroup=label,
        showlegend=legend,
        line={"color": colour, "dash": dash},
        customdata=span,
        hovertemplate=f"{label}<br>queries %{{customdata[0]:.0f}}–"
        "%{customdata[1]:.0f}<br>%{y:.3f}<extra></extra>",
    )


def make_reach_along_text(
    bin_starts: NDArray[np.integer],
    n_tokens: int,
    sink_hb: NDArray[np.floating],
    reach_hb: NDArray[np.floating],
    chosen: tuple[str, NDArray[np.floating], NDArray[np.floating]],
    even_sink_b: NDArray[np.floating],
) -> go.Figure:
    """Two panels over the text's position (each bin drawn at its middle): the weight on the
    first token and the reach, each as the median over every head ``sink_hb``/``reach_hb``
    [heads, bins], the ``chosen`` head (its name, sink [b], reach [b]) and an even spread
    (dashed: ``even_sink_b`` for the sink, 0.5 for the reach)."""
    starts = np.asarray(bin_starts, dtype=np.float64)
    b = starts.size
    name, chosen_sink, chosen_reach = chosen
    shapes = [np.shape(sink_hb)[-1], np.shape(reach_hb)[-1], len(chosen_sink), len(even_sink_b)]
    if b == 0 or any(s != b for s in [*shapes, len(chosen_reach)]):
        raise ValueError(f"{b} bins, but arrays of {shapes} and {len(chosen_reach)} bins")
    ends = np.append(starts[1:], n_tokens)
    middle = (starts + ends - 1) / 2
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.1,
        subplot_titles=("weight on the first token", "reach (share of the distance available)"),
    )
    panels = (
        (np.nanmedian(sink_hb, 0), np.asarray(chosen_sink), np.asarray(even_sink_b)),
        (np.nanmedian(reach_hb, 0), np.asarray(chosen_reach), np.full(b, 0.5)),
    )
    span = np.stack([starts, ends - 1], axis=1)
    for col, (median, own, even) in enumerate(panels, start=1):
        for label, y, colour, dash in (
            ("median over every head", median, BLUE, "solid"),
            (name, own, VERMILLION, "solid"),
            ("an even spread", even, GREY, "dash"),
        ):
            fig.add_trace(_line(middle, y, span, label, colour, dash, col == 1), row=1, col=col)
    fig.update_xaxes(title_text="position in the text (token)", range=[0, n_tokens])
    fig.update_yaxes(range=[0, 1])
    base_layout(fig, 380)
    fig.update_layout(legend={"orientation": "h", "y": -0.3, "x": 0}, margin={"t": 40})
    return fig
