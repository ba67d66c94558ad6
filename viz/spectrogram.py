"""The Listen page's figures, all on one time axis in seconds: the log-mel spectrogram (10 ms
columns), cross-attention tokens × time (20 ms encoder frames), a token's row drawn over the
spectrogram, the decoder's masked self-attention and the encoder's over the speech span, and the
heard words as spans of time.

Spans are half-open ranges of encoder frames (20 ms each, 1500 in Whisper's 30 s window)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from viz.common import (
    ORANGE,
    PATTERN_SCALE,
    SKY,
    VERMILLION,
    category_ticks,
    escape,
    figure,
    token_categories,
)

FRAME_S = 0.02  # one encoder frame
MEL_S = 0.01  # one log-mel column (two per encoder frame)


def frame_seconds(span: tuple[int, int]) -> list[float]:
    """The start time of each encoder frame in ``span``, in seconds."""
    return [round(f * FRAME_S, 3) for f in range(span[0], span[1])]


# The same plot area left and right on the time-axis figures, so their seconds line up on the page.
TIME_MARGIN = {"l": 120, "r": 150, "b": 10}
# The cross-attention explorer's map: 90 px of token labels on its left, the map as wide as the
# view less 150 px (explorer/js/cross.js, explorer.css): a figure under it with these margins
# puts its seconds under the map's.
EXPLORER_MARGIN = {"l": 90, "r": 60, "b": 10}


def _time_axis() -> dict[str, object]:
    return {"title": {"text": "time (s)"}, "ticksuffix": " s"}


def spectrogram(
    mel_ft: ArrayLike,
    span: tuple[int, int],
    row_k: ArrayLike | None = None,
    token: str = "",
) -> go.Figure:
    """The log-mel input over ``span`` (bins × time); with ``row_k`` (one token's weights over
    the span's frames) that row drawn on a second axis over it."""
    mel = np.asarray(mel_ft, dtype=np.float32)[:, 2 * span[0] : 2 * span[1]]
    times = [round((2 * span[0] + i) * MEL_S, 3) for i in range(mel.shape[1])]
    data: list[object] = [
        go.Heatmap(
            z=mel,
            x=times,
            colorscale="Viridis",  # Magma's near-black end is recoloured inside Streamlit
            colorbar={"title": {"text": "log-mel"}, "x": 1.1},
            hovertemplate="%{x:.2f} s, mel bin %{y}: %{z:.2f}<extra></extra>",
        )
    ]
    layout: dict[str, object] = {
        "xaxis": _time_axis(),
        "yaxis": {"title": {"text": "mel bin (pitch)"}, "automargin": False},
        "margin": {**TIME_MARGIN, "t": 10},
    }
    if row_k is not None:
        data.append(
            go.Scatter(
                x=frame_seconds(span),
                y=np.asarray(row_k, dtype=np.float32),
                yaxis="y2",
                mode="lines",
                line={"color": VERMILLION, "width": 2.5},
                name=f"weight of {token}",
                hovertemplate="%{x:.2f} s: weight %{y:.4f}<extra></extra>",
            )
        )
        layout["yaxis2"] = {
            "title": {"text": "attention weight"},
            "overlaying": "y",
            "side": "right",
            "rangemode": "tozero",
            "showgrid": False,
        }
        layout["showlegend"] = False
    return figure(data, layout, 300)


def cross_attention(
    rows_qk: ArrayLike, tokens: Sequence[str], span: tuple[int, int], title: str
) -> go.Figure:
    """Cross-attention tokens × time: each token's weights over the span's frames."""
    cats = token_categories(tokens)
    heat = go.Heatmap(
        z=np.asarray(rows_qk, dtype=np.float32),
        x=frame_seconds(span),
        y=cats,
        colorscale=PATTERN_SCALE,
        zmin=0.0,
        colorbar={"title": {"text": "weight"}},
        hovertemplate="%{y} at %{x:.2f} s: %{z:.4f}<extra></extra>",
    )
    layout = {
        "xaxis": _time_axis(),
        "yaxis": {"autorange": "reversed", "automargin": False, **category_ticks(tokens)},
        "margin": {**TIME_MARGIN, "t": 40},
    }
    return figure([heat], layout, 120 + 22 * len(tokens), title)


def token_pattern(pattern_qk: ArrayLike, tokens: Sequence[str], title: str) -> go.Figure:
    """The decoder's masked self-attention: rows (queries) and columns (keys) are tokens."""
    cats = token_categories(tokens)
    heat = go.Heatmap(
        z=np.asarray(pattern_qk, dtype=np.float32),
        x=cats,
        y=cats,
        colorscale=PATTERN_SCALE,
        zmin=0.0,
        zmax=1.0,
        hovertemplate="%{y} → %{x}: %{z:.4f}<extra></extra>",
    )
    layout = {
        "xaxis": {"title": {"text": "key (earlier token)"}, **category_ticks(tokens)},
        "yaxis": {"autorange": "reversed", **category_ticks(tokens)},
    }
    return figure([heat], layout, 160 + 22 * len(tokens), title)


def frame_pattern(pattern_kk: ArrayLike, span: tuple[int, int], title: str) -> go.Figure:
    """The encoder's self-attention over ``span``: frames × frames, both in seconds."""
    times = frame_seconds(span)
    heat = go.Heatmap(
        z=np.asarray(pattern_kk, dtype=np.float32),
        x=times,
        y=times,
        colorscale=PATTERN_SCALE,
        zmin=0.0,
        colorbar={"title": {"text": "weight"}},
        hovertemplate="%{y:.2f} s → %{x:.2f} s: %{z:.4f}<extra></extra>",
    )
    layout = {
        "xaxis": {**_time_axis(), "title": {"text": "key frame (s)"}},
        "yaxis": {"autorange": "reversed", "title": {"text": "query frame (s)"}},
    }
    return figure([heat], layout, 460, title)


def word_strip(
    words: Sequence[str], starts: ArrayLike, ends: ArrayLike, span: tuple[int, int]
) -> go.Figure:
    """Words on the time axis: each a labelled bar from its start to its end (seconds), in two
    alternating lanes so neighbours' labels do not collide, over the seconds of ``span`` (the
    same range and plot area as the cross-attention explorer's map above it)."""
    start = np.asarray(starts, dtype=np.float64)
    end = np.asarray(ends, dtype=np.float64)
    labels = [escape(w.strip()) for w in words]
    lanes = ["" if i % 2 else " " for i in range(len(labels))]  # two lanes, no axis labels
    bar = go.Bar(
        x=end - start,
        base=start,
        y=lanes,
        orientation="h",
        text=labels,
        textposition="inside",
        insidetextanchor="middle",
        textangle=0,
        constraintext="none",  # a short word's label may overflow its bar rather than shrink
        textfont={"size": 12},
        customdata=np.stack([start, end], axis=1) if len(labels) else None,
        marker={"color": [SKY if i % 2 else ORANGE for i in range(len(labels))]},
        hovertemplate="%{text}: %{customdata[0]:.2f}–%{customdata[1]:.2f} s<extra></extra>",
    )
    layout = {
        "xaxis": {**_time_axis(), "range": [span[0] * FRAME_S, span[1] * FRAME_S]},
        "yaxis": {"showticklabels": False, "fixedrange": True},
        "bargap": 0.15,
        "margin": {**EXPLORER_MARGIN, "t": 10},
    }
    return figure([bar], layout, 140)
