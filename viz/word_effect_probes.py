"""A token's cosine with each probe word at one hidden state, with a word of its sentence visible
and with that word hidden: grouped bars per probe."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from viz.common import GREY, VERMILLION, base_layout, escape

WITH_COLOUR = VERMILLION  # the sentence as written
WITHOUT_COLOUR = GREY  # grey: the word hidden


def make_word_effect_probes(
    with_p: NDArray[np.floating],
    without_p: NDArray[np.floating],
    probe_words: Sequence[str],
    *,
    hidden_word: str,
    state_label: str,
    height: int = 340,
) -> go.Figure:
    """Bars of ``with_p`` (word visible) and ``without_p`` (word hidden) for each probe, both the
    cosine of the watched token with the probe at the hidden state ``state_label``."""
    if not len(with_p) == len(without_p) == len(probe_words):
        raise ValueError(
            f"{len(with_p)} / {len(without_p)} values for {len(probe_words)} probe words"
        )
    names = [escape(w) for w in probe_words]
    fig = go.Figure()
    for values, label, colour in (
        (with_p, f"with “{hidden_word}”", WITH_COLOUR),
        (without_p, f"“{hidden_word}” hidden", WITHOUT_COLOUR),
    ):
        label = escape(label)
        fig.add_trace(
            go.Bar(
                x=names,
                y=np.asarray(values, np.float64),
                name=label,
                marker_color=colour,
                texttemplate="%{y:.3f}",
                textposition="outside",
                hovertemplate=f"{label} · {escape(state_label)}<br>probe %{{x}}: cosine %{{y:.4f}}"
                "<extra></extra>",
            )
        )
    fig.update_xaxes(title_text="probe word")
    fig.update_yaxes(title_text=escape(f"cosine similarity ({state_label})"))
    fig.update_layout(barmode="group", legend={"orientation": "h", "y": 1.12, "x": 0})
    return base_layout(fig, height)
