"""Tokens in a 2-D PCA plane: an arrow from each token's embedding to its vector after a layer,
one animation frame per hidden state ("embedding", "after layer 0", …), with the probe words at
the same state as stars. Hidden states are named by the engine (attention_core.core.display)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike, NDArray

from attention_core.core.config import ModelConfig
from attention_core.core.display import state_name
from viz.common import BLUE, ORANGE, VERMILLION, base_layout, escape

TOKEN_COLOUR = BLUE
PROBE_COLOUR = ORANGE
FOCUS_COLOUR = VERMILLION


layer_name = state_name  # the engine's one naming of hidden states (attention_core.core.display)


def axis_titles(explained_c: Sequence[float]) -> tuple[str, str]:
    """ "PC1 (34% of variance)" for the first two components."""
    first, second = (f"PC{i + 1} ({r:.0%} of variance)" for i, r in enumerate(explained_c[:2]))
    return first, second


def padded_range(values: ArrayLike, pad: float = 0.12) -> list[float]:
    """A fixed axis range around every frame's points, so the axes do not jump while animating."""
    lo, hi = float(np.nanmin(values)), float(np.nanmax(values))
    margin = max(hi - lo, 1e-6) * pad
    return [lo - margin, hi + margin]


def pca_axes(fig: go.Figure, points_p2: NDArray[np.floating], explained_c: Sequence[float]) -> None:
    """Axes titled by the two components, fixed around every point, at one scale (true
    distances, not stretched)."""
    x_title, y_title = axis_titles(explained_c) if len(explained_c) >= 2 else ("PC1", "PC2")
    fig.update_xaxes(title_text=x_title, range=padded_range(points_p2[:, 0]), zeroline=False)
    fig.update_yaxes(
        title_text=y_title,
        range=padded_range(points_p2[:, 1]),
        zeroline=False,
        scaleanchor="x",
        scaleratio=1,
    )


def _alternating(n: int) -> list[str]:
    """Label positions below and above in turn, so nearby probe labels overlap less."""
    return ["bottom center" if i % 2 == 0 else "top center" for i in range(n)]


def _arrows(
    start_t2: NDArray[np.floating], end_t2: NDArray[np.floating], focus: int | None
) -> go.Scatter:
    xs, ys, sizes, colours = [], [], [], []
    for i, (a, b) in enumerate(zip(start_t2, end_t2, strict=True)):
        xs += [a[0], b[0], None]
        ys += [a[1], b[1], None]
        sizes += [0, 14 if i == focus else 11, 0]
        colours += [FOCUS_COLOUR if i == focus else TOKEN_COLOUR] * 3
    return go.Scatter(
        x=xs,
        y=ys,
        mode="lines+markers",
        name="shift",
        hoverinfo="skip",
        showlegend=False,
        line={"color": TOKEN_COLOUR, "width": 1.2},
        marker={"symbol": "arrow", "angleref": "previous", "size": sizes, "color": colours},
    )


def name_states(fig: go.Figure, value: str, config: ModelConfig | None = None) -> go.Figure:
    """Relabel a figure whose x values are hidden-state indices (such as
    ``viz.layer_similarity``'s lines) with the state names (``config``: the model's, see
    ``state_name``), and its y values as ``value``."""
    for trace in fig.data:  # categories keep their index as x, so vertical lines stay put
        trace.update(
            x=[layer_name(int(i), config) for i in trace.x],
            hovertemplate=f"{trace.name}<br>%{{x}}: {value} %{{y:.4f}}<extra></extra>",
        )
    fig.update_xaxes(title_text=None, type="category", tickmode="auto")
    fig.update_yaxes(title_text=value)
    return fig


def _frame_traces(
    static_t2: NDArray[np.floating],
    contextual_t2: NDArray[np.floating],
    probes_p2: NDArray[np.floating],
    tokens: Sequence[str],
    probe_words: Sequence[str],
    name: str,
    focus: int | None,
) -> list[go.Scatter]:
    sizes = [13 if i == focus else 8 for i in range(len(tokens))]
    return [
        go.Scatter(
            x=contextual_t2[:, 0],
            y=contextual_t2[:, 1],
            mode="markers+text",
            name="in context",
            text=[escape(t) for t in tokens],
            textposition="top center",
            marker={"color": TOKEN_COLOUR, "size": sizes, "line": {"width": 0}},
            hovertemplate=f"%{{text}} · {name}<br>(%{{x:.3f}}, %{{y:.3f}})<extra></extra>",
        ),
        go.Scatter(
            x=probes_p2[:, 0],
            y=probes_p2[:, 1],
            mode="markers+text",
            name="probe words",
            text=[escape(w) for w in probe_words],
            textposition=_alternating(len(probe_words)),
            marker={"color": PROBE_COLOUR, "size": 14, "symbol": "star"},
            hovertemplate=f"probe %{{text}} · {name}<br>(%{{x:.3f}}, %{{y:.3f}})<extra></extra>",
        ),
        _arrows(static_t2, contextual_t2, focus),  # last, so arrowheads sit on top of the dots
    ]


def _controls(names: Sequence[str], active: int) -> dict[str, object]:
    """A slider with one step per hidden state, named like the frames ("embedding", "after
    layer 0", …), and a Play button that runs through every state."""
    move = {
        "mode": "immediate",
        "frame": {"duration": 0, "redraw": False},
        "transition": {"duration": 300},
    }
    play = {
        "mode": "immediate",
        "frame": {"duration": 900, "redraw": False},
        "transition": {"duration": 500},
        "fromcurrent": False,
    }
    steps = [{"label": name, "method": "animate", "args": [[name], move]} for name in names]
    # the slider ends at 0.92: the last label is centred on its step and would be cut at 1.0
    slider = {
        "active": active,
        "steps": steps,
        "currentvalue": {"prefix": "showing: "},
        "pad": {"t": 30},
        "x": 0.12,
        "len": 0.8,
        "font": {"size": 11},
    }
    button = {"label": "▶ Play", "method": "animate", "args": [None, play]}
    menu = {
        "type": "buttons",
        "showactive": False,
        "buttons": [button],
        "x": 0.0,
        "y": 0,
        "xanchor": "left",
        "yanchor": "top",
        "pad": {"t": 40},
    }
    return {"sliders": [slider], "updatemenus": [menu]}


def make_embedding_shift(
    tokens_lt2: NDArray[np.floating],
    probes_lp2: NDArray[np.floating],
    tokens: Sequence[str],
    probe_words: Sequence[str],
    *,
    state: int,
    explained_c: Sequence[float] = (),
    focus: int | None = None,
    height: int = 560,
    config: ModelConfig | None = None,
) -> go.Figure:
    """``tokens_lt2[0]`` are the embeddings and ``tokens_lt2[l]`` the vectors after layer l − 1,
    already projected; ``probes_lp2`` the probes at each hidden state. Frame ``layer_name(l,
    config)`` draws an arrow embedding -> state l per token; the figure opens on ``state``.
    ``focus`` is the index (into ``tokens``) of a token drawn larger, in another colour."""
    n_states = len(tokens_lt2)
    shapes = (tokens_lt2.shape, probes_lp2.shape)
    if shapes != ((n_states, len(tokens), 2), (n_states, len(probe_words), 2)):
        raise ValueError(
            f"coordinates {tokens_lt2.shape} / {probes_lp2.shape} do not match "
            f"{len(tokens)} tokens and {len(probe_words)} probe words"
        )
    if not 0 <= state < n_states:
        raise ValueError(f"state must be in [0, {n_states - 1}], got {state}")
    embedding = go.Scatter(
        x=tokens_lt2[0, :, 0],
        y=tokens_lt2[0, :, 1],
        mode="markers",
        name=layer_name(0),
        text=[escape(t) for t in tokens],
        marker={"color": TOKEN_COLOUR, "size": 8, "symbol": "circle-open"},
        hovertemplate=f"%{{text}} · {layer_name(0)}<br>(%{{x:.3f}}, %{{y:.3f}})<extra></extra>",
    )
    names = [layer_name(i, config) for i in range(n_states)]
    per_state = [
        _frame_traces(tokens_lt2[0], tokens_lt2[i], probes_lp2[i], tokens, probe_words, name, focus)
        for i, name in enumerate(names)
    ]
    fig = go.Figure(data=[embedding, *per_state[state]])
    fig.frames = [
        go.Frame(data=traces, traces=[1, 2, 3], name=name)
        for name, traces in zip(names, per_state, strict=True)
    ]
    every = np.concatenate([tokens_lt2.reshape(-1, 2), probes_lp2.reshape(-1, 2)])
    pca_axes(fig, every, explained_c)
    fig.update_layout(legend={"orientation": "h", "y": 1.08, "x": 0}, **_controls(names, state))
    base_layout(fig, height)
    fig.update_layout(margin={"l": 10, "r": 10, "t": 40, "b": 90})  # room for slider and Play
    return fig
