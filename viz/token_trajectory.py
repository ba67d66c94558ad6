"""One token's path through the model in the PCA plane: its embedding (marked E), then its vector
after each layer (marked with the layer's number, 0 first, like the sidebar's Layer slider)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from attention_core.core.config import ModelConfig
from viz.common import base_layout, escape
from viz.embedding_shift import FOCUS_COLOUR, PROBE_COLOUR, layer_name, pca_axes


def state_marks(n_states: int) -> list[str]:
    """The text on each dot: "E" for the embedding, then the number of the layer just passed."""
    return ["E", *(str(i) for i in range(n_states - 1))]


def _probes(
    probes_p2: NDArray[np.floating], probe_words: Sequence[str], probe_name: str
) -> go.Scatter:
    """The probe words as stars, labelled."""
    return go.Scatter(
        x=probes_p2[:, 0],
        y=probes_p2[:, 1],
        mode="markers+text",
        name=f"probe words ({probe_name})",
        text=[escape(w) for w in probe_words],
        textposition="bottom center",
        marker={"color": PROBE_COLOUR, "size": 14, "symbol": "star"},
        hovertemplate=f"probe %{{text}} · {probe_name}<br>(%{{x:.3f}}, %{{y:.3f}})<extra></extra>",
    )


def make_token_trajectory(
    path_l2: NDArray[np.floating],
    token: str,
    probes_p2: NDArray[np.floating],
    probe_words: Sequence[str],
    *,
    probe_state: int,
    explained_c: Sequence[float] = (),
    height: int = 460,
    config: ModelConfig | None = None,
) -> go.Figure:
    """``path_l2[l]`` is the token's projected vector at hidden state l (0 = the embedding, l =
    after layer l − 1); the probes are drawn as stars at hidden state ``probe_state``. States
    are named by ``layer_name(l, config)``."""
    if path_l2.shape[1:] != (2,) or probes_p2.shape != (len(probe_words), 2):
        raise ValueError(
            f"path {path_l2.shape} must be [states, 2] and probes {probes_p2.shape} "
            f"[{len(probe_words)}, 2]"
        )
    label = escape(token)
    probe_name = layer_name(probe_state, config)
    fig = go.Figure(
        [
            go.Scatter(
                x=path_l2[:, 0],
                y=path_l2[:, 1],
                mode="lines+markers+text",
                name=label,
                text=state_marks(len(path_l2)),
                textposition="middle center",
                textfont={"color": "white", "size": 11},
                customdata=[layer_name(i, config) for i in range(len(path_l2))],
                line={"color": FOCUS_COLOUR, "width": 2},
                marker={"color": FOCUS_COLOUR, "size": 20},
                hovertemplate=f"{label} · %{{customdata}}<br>(%{{x:.3f}}, %{{y:.3f}})"
                "<extra></extra>",
            ),
            _probes(probes_p2, probe_words, probe_name),
        ]
    )
    pca_axes(fig, np.concatenate([path_l2, probes_p2]), explained_c)
    fig.update_layout(legend={"orientation": "h", "y": 1.08, "x": 0})
    return base_layout(fig, height)
