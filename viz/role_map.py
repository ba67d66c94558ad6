"""The role map: every head of a model as one cell (layers down, heads across), coloured by the
job ``methods.roles`` names it by on one sentence, with its short label and score written in it."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

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
ROW_PX = 24  # height of a layer's row (small: 12)


def _colourscale() -> list[tuple[float, str]]:
    """A stepped scale: role number i (z = i) gets exactly its colour."""
    n = len(COLOURS)
    steps = []
    for i, colour in enumerate(COLOURS.values()):
        steps += [(i / n, colour), ((i + 1) / n, colour)]
    return steps


def _hover_lines(role: HeadRole, said: str) -> list[str]:
    """The head's badge and, wrapped, what is said of it (the rule as it applies to it)."""
    return [escape(line) for line in [role.badge(), *textwrap.wrap(said, 64)]]


def _cells(
    names: Sequence[Sequence[HeadRole]], said: Sequence[Sequence[str]] | None, small: bool
) -> go.Heatmap:
    """Every head as a cell: z its role's place in ``COLOURS``, its label and score as text
    (Plotly picks black or white text to read on each colour), its hover lines as customdata
    (the line breaks in the template: no markup in the data)."""
    order = list(COLOURS)
    lines = [[_hover_lines(h, said[h.layer][h.head] if said else "") for h in row] for row in names]
    n_lines = max(len(cell) for row in lines for cell in row)
    hover = "<br>".join(f"%{{customdata[{i}]}}" for i in range(n_lines))
    return go.Heatmap(
        z=[[order.index(h.role) for h in row] for row in names],
        text=[[f"{SHORT[h.role]} {h.score:.2f}" for h in row] for row in names],
        texttemplate="" if small else "%{text}",
        textfont={"size": 10},
        customdata=[[cell + [""] * (n_lines - len(cell)) for cell in row] for row in lines],
        hovertemplate=f"layer %{{y}}, head %{{x}}<br>{hover}<extra></extra>",
        colorscale=_colourscale(),
        zmin=-0.5,
        zmax=len(order) - 0.5,
        showscale=False,
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
    names: Sequence[Sequence[HeadRole]],
    said: Sequence[Sequence[str]] | None = None,
    *,
    small: bool = False,
    title: str | None = None,
) -> go.Figure:
    """``names`` [layer][head] (``methods.roles.name_heads``) as a map: layer 0 at the top,
    heads across; each cell coloured by the head's role, with its short label and score
    ("prev 0.52"; ``small``: colours only), its badge and ``said`` of it ([layer][head],
    ``lessons.head_words.head_sentence``) on hover."""
    if not names or not names[0]:
        raise ValueError("the role map needs at least one layer and one head")
    n_layers, n_heads = len(names), len(names[0])
    roles = {h.role for row in names for h in row}
    data = [_cells(names, said, small), *_legend(sorted(roles))]
    axis = {"showgrid": False, "zeroline": False, "dtick": 1}
    layout = {
        "xaxis": {**axis, "title": {"text": "head"}, "range": [-0.5, n_heads - 0.5], "side": "top"},
        "yaxis": {
            **axis,
            "title": {"text": "layer"},
            "range": [n_layers - 0.5, -0.5],  # layer 0 at the top
            "dtick": 1 if n_layers <= 12 else 2,
        },
        "legend": {"orientation": "h", "y": -0.02, "yanchor": "top", "x": 0},  # below the map
        "showlegend": True,
    }
    row = 12 if small else ROW_PX
    return figure(data, layout, height=n_layers * row + 150, title=title)
