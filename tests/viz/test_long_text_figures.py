"""Structure of the Long text page's figures: the head maps, the along-the-text lines, the cost
fit; trace types, shapes, axes, hovers, and the values they were given."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from attention_core.lessons.cost import fit_cost
from attention_core.methods.reach import head_reach
from tests.figdata import array
from viz.head_measure_map import make_head_measure_map
from viz.long_cost import make_long_cost
from viz.reach_along_text import make_reach_along_text


def test_head_map_is_layers_down_heads_across_on_a_fixed_scale():
    values = np.linspace(0, 1, 30 * 9).reshape(30, 9)
    distance = values * 100
    fig = make_head_measure_map(values, "reach", 0.5, "reach", distance_lh=distance)
    [heat] = fig.data
    assert isinstance(heat, go.Heatmap)
    np.testing.assert_allclose(array(heat.z), values)
    assert list(heat.x) == list(range(9)) and list(heat.y) == list(range(30))
    assert (heat.zmin, heat.zmax) == (0.0, 1.0)
    assert "0.50 even spread" in heat.colorbar.ticktext
    assert "tokens back" in heat.hovertemplate
    np.testing.assert_allclose(array(heat.customdata), distance)
    assert fig.layout.yaxis.autorange == "reversed"
    with pytest.raises(ValueError, match="do not match"):
        make_head_measure_map(values, "reach", 0.5, "t", distance_lh=distance[:2])


def test_along_the_text_has_median_head_and_even_spread_in_both_panels():
    n, size = 40, 16
    lower = np.tril(np.ones((n, n)))
    uniform = (lower / lower.sum(-1, keepdims=True)).astype(np.float32)
    first = np.zeros((n, n), np.float32)
    first[:, 0] = 1
    r = head_reach(np.stack([uniform, first, uniform]), size)
    starts = np.arange(0, n, size)
    even = r.sink_hb[0]  # the uniform head's sink is the even spread's
    fig = make_reach_along_text(
        starts, n, r.sink_hb, r.reach_hb, ("layer 1, head 1", r.sink_hb[1], r.reach_hb[1]), even
    )
    assert len(fig.data) == 6 and all(isinstance(d, go.Scatter) for d in fig.data)
    np.testing.assert_allclose(array(fig.data[0].x), [7.5, 23.5, 35.5])  # bins' middles
    np.testing.assert_allclose(array(fig.data[0].y), np.median(r.sink_hb, 0))
    np.testing.assert_allclose(array(fig.data[4].y), r.reach_hb[1])  # the chosen head: 1 (sink)
    np.testing.assert_allclose(array(fig.data[5].y), 0.5)
    assert [d.showlegend for d in fig.data] == [True] * 3 + [False] * 3
    assert "queries" in fig.data[0].hovertemplate
    with pytest.raises(ValueError, match="bins"):
        make_reach_along_text(starts, n, r.sink_hb, r.reach_hb, ("x", even[:2], even), even)


def test_cost_figure_draws_the_points_the_fit_and_its_square_part():
    n = np.array([128, 256, 512, 1024, 2048])
    seconds = 1e-3 * n + 2e-6 * n * n + 0.1
    held = 600_000 * n
    patterns = 30 * 9 * n * n * 4
    time_fit, memory_fit = fit_cost(n, seconds), fit_cost(n, held)
    fig = make_long_cost(n, seconds, time_fit, held, memory_fit, patterns)
    names = [d.name for d in fig.data]
    assert names == [
        "measured",
        "fit a·n + b·n² + c",
        "its n² part b·n²",
        "the trace holds",
        "fit of what it holds",
        "every pattern (not held)",
    ]
    np.testing.assert_allclose(array(fig.data[0].y), seconds)
    grid = array(fig.data[1].x)
    np.testing.assert_allclose(array(fig.data[1].y), time_fit(grid))
    np.testing.assert_allclose(array(fig.data[2].y), time_fit.b * grid**2)
    np.testing.assert_allclose(array(fig.data[3].y), held / 1e6)
    np.testing.assert_allclose(array(fig.data[5].y), patterns / 1e6)
    assert list(fig.layout.xaxis.tickvals) == n.tolist()
    with pytest.raises(ValueError, match="sizes"):
        make_long_cost(n, seconds[:2], time_fit, held, memory_fit, patterns)
