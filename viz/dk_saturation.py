"""Why ÷√d_k: pattern entropy and largest weight of random heads against d_k, scaled or not."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray
from plotly.subplots import make_subplots

from attention_core import Saturation
from viz.common import BLUE, VERMILLION, base_layout

# Okabe–Ito blue and vermillion: distinguishable with every common colour-vision deficiency,
# and the unscaled line is also dashed.
SCALED = ("with ÷√d_k", BLUE, "solid")
UNSCALED = ("without scaling", VERMILLION, "dash")
DOTTED = {"color": "rgba(128,128,128,0.8)", "dash": "dot", "width": 1}  # reference lines


def _line(
    x: list[int],
    y: NDArray[np.floating],
    std: NDArray[np.floating],
    style: tuple[str, str, str],
    unit: str,
    first: bool,
) -> go.Scatter:
    name, colour, dash = style
    return go.Scatter(
        x=x,
        y=np.asarray(y, dtype=np.float64),
        customdata=np.asarray(std, dtype=np.float64),
        error_y={"type": "data", "array": np.asarray(std, dtype=np.float64), "thickness": 1},
        mode="lines+markers",
        name=name,
        legendgroup=name,
        showlegend=first,
        line={"color": colour, "dash": dash},
        hovertemplate=f"{name}<br>d_k = %{{x}}<br>%{{y:.3f}}{unit} (± %{{customdata:.3f}} "
        "over seeds)<extra></extra>",
    )


def make_dk_saturation(sat: Saturation, current_d_k: int | None = None) -> go.Figure:
    """Two panels over d_k (log axis): mean row entropy in bits, and mean largest weight per row;
    one line with ÷√d_k, one without; error bars are the spread over seeds. Grey dotted lines
    mark a uniform row (log2 n bits, weight 1/n) and, when given, the block's own d_k."""
    x = list(sat.d_ks)
    n = sat.n_tokens
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.1,
        subplot_titles=("row entropy (bits)", "largest weight in a row"),
    )
    entropy = (sat.entropy_scaled, sat.entropy_scaled_std, sat.entropy_unscaled)
    largest = (sat.max_scaled, sat.max_scaled_std, sat.max_unscaled)
    panels = (
        (*entropy, sat.entropy_unscaled_std, " bits", float(np.log2(n)), f"uniform: log2 {n}"),
        (*largest, sat.max_unscaled_std, "", 1.0 / n, f"uniform: 1/{n}"),
    )
    for col, (ys, ys_std, yu, yu_std, unit, uniform, label) in enumerate(panels, start=1):
        fig.add_trace(_line(x, ys, ys_std, SCALED, unit, col == 1), row=1, col=col)
        fig.add_trace(_line(x, yu, yu_std, UNSCALED, unit, col == 1), row=1, col=col)
        fig.add_hline(
            y=uniform,
            line=DOTTED,
            annotation_text=label,
            annotation_position="top left",
            row=1,
            col=col,
        )
        if current_d_k is not None:
            fig.add_vline(x=current_d_k, line=DOTTED, row=1, col=col)
    fig.update_xaxes(type="log", tickvals=x, ticktext=[str(d) for d in x], title_text="d_k")
    # fixed ranges: the uniform line (and its label) sits inside the panel, below the title
    fig.update_yaxes(range=[0, 1.15 * max(float(np.log2(n)), 0.5)], row=1, col=1)
    fig.update_yaxes(range=[0, 1.1], row=1, col=2)
    fig.update_layout(legend={"orientation": "h", "y": -0.25, "x": 0})
    base_layout(fig, 400)
    return fig.update_layout(margin_t=36)  # room for the panel titles
