"""The role map: every head of a model as one cell (layers down, heads across), coloured by the
job ``methods.roles`` names it by on one sentence, with its short label and score written in it."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attention_core.methods.roles import LABELS, HeadRole
from viz.common import (
    BLUE,
    GREEN,
    ORANGE,
    PURPLE,
    SKY,
    VERMILLION,
    YELLOW,
    escape,
    figure,
)

# Each role's colour (Okabe-Ito), in legend order; "mixed" (no single job) a pale grey.
COLOURS = {
    "previous_token": BLUE,
    "duplicate_token": SKY,
    "induction": VERMILLION,
    "self": GREEN,
    "first_token": ORANGE,
    "last_token": YELLOW,
    "broad": PURPLE,
    "mixed": "#DDDDDD",
}
DARK = ("previous_token", "induction", "self")  # white text on these, black on the others
SHORT = {  # what a cell says, with its score
    "previous_token": "prev",
    "duplicate_token": "dup",
    "induction": "ind",
    "self": "self",
    "first_token": "sink",
    "last_token": "[SEP]",
    "broad": "broad",
    "mixed": "mixed",
}
ROW_PX = 24  # height of a layer's row (small: 10)


def _colourscale() -> list[tuple[float, str]]:
    """A stepped scale: role number i (z = i) gets exactly its colour."""
    n = len(COLOURS)
    steps = []
    for i, colour in enumerate(COLOURS.values()):
        steps += [(i / n, colour), ((i + 1) / n, colour)]
    return steps


def _hover(role: HeadRole) -> str:
    """The head's badge and, wrapped, its sentence (the rule as it applies to this head)."""
    lines = textwrap.wrap(role.sentence(), 60)
    return "<br>".join(escape(line) for line in [f"{role.badge()}", *lines])


def _layer(names: Sequence[Sequence[HeadRole]], dark: bool, small: bool) -> go.Heatmap:
    """One heatmap of the cells whose colour is dark (``dark``) or light (the others blank), so
    each gets text that reads on it."""
    order = list(COLOURS)
    z = [
        [order.index(h.role) if (h.role in DARK) == dark else np.nan for h in row] for row in names
    ]
    text = [[f"{SHORT[h.role]} {h.score:.2f}" for h in row] for row in names]
    return go.Heatmap(
        z=z,
        text=text,
        texttemplate="" if small else "%{text}",
        textfont={"color": "white" if dark else "black", "size": 10},
        hovertext=[[_hover(h) for h in row] for row in names],
        hovertemplate="layer %{y}, head %{x}<br>%{hovertext}<extra></extra>",
        colorscale=_colourscale(),
        zmin=-0.5,
        zmax=len(order) - 0.5,
        showscale=False,
        hoverongaps=False,
        xgap=1,
        ygap=1,
    )


def _legend(roles: Sequence[str]) -> list[go.Scatter]:
    """One legend entry per role on the map (a heatmap has no legend of its own)."""
    return [
        go.Scatter(
            x=[None],
            y=[None],
            mode="markers",
            marker={"symbol": "square", "size": 12, "color": COLOURS[role]},
            name=LABELS[role],
            hoverinfo="skip",
        )
        for role in COLOURS
        if role in roles
    ]


def make_role_map(
    names: Sequence[Sequence[HeadRole]], *, small: bool = False, title: str | None = None
) -> go.Figure:
    """``names`` [layer][head] (``methods.roles.name_heads``) as a map: layer 0 at the top,
    heads across; each cell coloured by the head's role, with its short label and score
    ("prev 0.52"; ``small``: colours only), its badge and sentence on hover."""
    if not names or not names[0]:
        raise ValueError("the role map needs at least one layer and one head")
    n_layers, n_heads = len(names), len(names[0])
    roles = {h.role for row in names for h in row}
    data = [_layer(names, True, small), _layer(names, False, small), *_legend(sorted(roles))]
    axis = {"showgrid": False, "zeroline": False, "dtick": 1}
    layout = {
        "xaxis": {**axis, "title": {"text": "head"}, "range": [-0.5, n_heads - 0.5]},
        "yaxis": {
            **axis,
            "title": {"text": "layer"},
            "range": [n_layers - 0.5, -0.5],  # layer 0 at the top
            "dtick": 1 if n_layers <= 12 else 2,
        },
        "legend": {"orientation": "h", "y": -0.12 if small else -0.08, "x": 0},
        "showlegend": True,
    }
    row = 10 if small else ROW_PX
    return figure(data, layout, height=n_layers * row + 140, title=title)
