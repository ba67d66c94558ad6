"""A token's similarity with each probe word, before context (the embedding) and after a layer,
as grouped bars: by default the cosine minus its mean over the probes (see
``attention_core.methods.geometry.ProbeCosines``), so a drift shared by every probe does not
show."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from viz.common import SKY, VERMILLION, base_layout, escape

BEFORE_COLOUR = SKY
AFTER_COLOUR = VERMILLION
RELATIVE = "cosine − mean over the probes"


def make_probe_similarity(
    before_p: NDArray[np.floating],
    after_p: NDArray[np.floating],
    probe_words: Sequence[str],
    *,
    after_label: str,
    before_label: str = "embedding",
    value: str = RELATIVE,
    height: int = 340,
) -> go.Figure:
    """Grouped bars per probe: ``before_p`` (at the embedding) and ``after_p`` (after a layer),
    both measured as ``value`` (the y-axis title and the hover's name for a number)."""
    if not len(before_p) == len(after_p) == len(probe_words):
        raise ValueError(
            f"{len(before_p)} / {len(after_p)} values for {len(probe_words)} probe words"
        )
    names = [escape(w) for w in probe_words]
    fig = go.Figure()
    for values, label, colour in (
        (before_p, before_label, BEFORE_COLOUR),
        (after_p, after_label, AFTER_COLOUR),
    ):
        fig.add_trace(
            go.Bar(
                x=names,
                y=np.asarray(values, np.float64),
                name=escape(label),
                marker_color=colour,
                texttemplate="%{y:+.3f}",
                textposition="outside",
                hovertemplate=(
                    f"{escape(label)}<br>probe %{{x}}: {value} %{{y:+.4f}}<extra></extra>"
                ),
            )
        )
    fig.update_xaxes(title_text="probe word")
    fig.update_yaxes(title_text=value, zeroline=True, zerolinecolor="gray", zerolinewidth=1)
    fig.update_layout(barmode="group", legend={"orientation": "h", "y": 1.12, "x": 0})
    return base_layout(fig, height)
