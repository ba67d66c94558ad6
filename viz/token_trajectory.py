"""One token's path through the layers in the PCA plane: layer 0 (static) -> 6, numbered."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from numpy.typing import NDArray

from viz.common import base_layout, escape
from viz.embedding_shift import FOCUS_COLOUR, PROBE_COLOUR, axis_titles, padded_range


def make_token_trajectory(
    path_l2: NDArray,
    token: str,
    probes_p2: NDArray,
    probe_words: Sequence[str],
    *,
    probe_layer: int,
    explained_c: Sequence[float] = (),
    height: int = 460,
) -> go.Figure:
    """``path_l2[L]`` is the token's projected vector after L blocks (0 = static); the probes
    are drawn as stars at ``probe_layer``. Markers carry the layer number."""
    if path_l2.ndim != 2 or path_l2.shape[1] != 2 or probes_p2.shape != (len(probe_words), 2):
        raise ValueError(f"path {path_l2.shape} must be [layers, 2] and probes {probes_p2.shape} "
                         f"[{len(probe_words)}, 2]")  # fmt: skip
    label = escape(token)
    layers = list(range(len(path_l2)))
    fig = go.Figure(
        [
            go.Scatter(
                x=path_l2[:, 0], y=path_l2[:, 1], mode="lines+markers+text", name=label,
                text=[str(i) for i in layers], textposition="middle center",
                textfont={"color": "white", "size": 11}, customdata=layers,
                line={"color": FOCUS_COLOUR, "width": 2},
                marker={"color": FOCUS_COLOUR, "size": 20},
                hovertemplate=f"{label} · layer %{{customdata}}<br>(%{{x:.3f}}, %{{y:.3f}})"
                "<extra></extra>",
            ),
            go.Scatter(
                x=probes_p2[:, 0], y=probes_p2[:, 1], mode="markers+text",
                name=f"probe words (layer {probe_layer})",
                text=[escape(w) for w in probe_words], textposition="bottom center",
                marker={"color": PROBE_COLOUR, "size": 14, "symbol": "star"},
                hovertemplate=f"probe %{{text}} · layer {probe_layer}<br>(%{{x:.3f}}, %{{y:.3f}})"
                "<extra></extra>",
            ),
        ]
    )  # fmt: skip
    x_title, y_title = axis_titles(explained_c) if len(explained_c) >= 2 else ("PC1", "PC2")
    points = [*path_l2.tolist(), *probes_p2.tolist()]
    fig.update_xaxes(title_text=x_title, range=padded_range([p[0] for p in points]),
                     zeroline=False)  # fmt: skip
    fig.update_yaxes(title_text=y_title, range=padded_range([p[1] for p in points]),
                     zeroline=False, scaleanchor="x", scaleratio=1)  # fmt: skip
    fig.update_layout(legend={"orientation": "h", "y": 1.08, "x": 0})
    return base_layout(fig, height)
