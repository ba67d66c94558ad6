"""The role map and the probe's loss chart: structure (cells, text, hover, legend, lines)."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.methods.roles import HeadRole
from viz.probe_loss import make_probe_loss
from viz.role_map import COLOURS, make_role_map


def _role(layer: int, head: int, role: str, score: float) -> HeadRole:
    top = (
        (("first_token", 0.41), ("self", 0.2))
        if role == "mixed"
        else ((role, score), ("self", 0.1))
    )
    return HeadRole(layer, head, role, score, 0.05, top)


def test_each_head_is_one_cell_coloured_by_its_role():
    names = [
        [_role(0, 0, "previous_token", 0.52), _role(0, 1, "mixed", 0.41)],
        [_role(1, 0, "last_token", 0.8), _role(1, 1, "induction", 0.43)],
    ]
    fig = make_role_map(names)
    cells, *legend = fig.data
    order = list(COLOURS)
    assert np.asarray(cells.z).tolist() == [
        [order.index("previous_token"), order.index("mixed")],
        [order.index("last_token"), order.index("induction")],
    ]
    assert cells.text[0][0] == "prev 0.52" and cells.text[1][0] == "[SEP] 0.80"
    assert cells.customdata[0][1][0] == "mixed: first-token sink 0.41 · self 0.20"
    assert "<" not in "".join(line for row in cells.customdata for c in row for line in c)
    assert {t.name for t in legend} == {"previous-token", "mixed", "[SEP] sink", "induction"}
    assert fig.layout.yaxis.range == (1.5, -0.5)  # layer 0 at the top
    assert make_role_map(names, small=True).data[0].texttemplate == ""
    with pytest.raises(ValueError, match="at least one"):
        make_role_map([])


def test_the_probe_loss_draws_each_copy_and_the_what_if():
    loss = np.array([np.nan, 9.0, 8.0, 7.0, 1.0, 0.5, 0.2, 0.1])
    fig = make_probe_loss(loss, loss + 3, "what-if")
    first, second, knocked = fig.data
    assert np.isnan(first.y[0]) and list(first.y[1:]) == [9.0, 8.0, 7.0]
    assert list(second.y) == [1.0, 0.5, 0.2, 0.1] and list(second.x) == [0, 1, 2, 3]
    assert knocked.name == "what-if" and knocked.line.dash == "dash"
    with pytest.raises(ValueError, match="read twice"):
        make_probe_loss(np.ones(3))
