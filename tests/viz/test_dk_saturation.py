"""The d_k saturation chart: the measured curves, log d_k axis, reference lines, finite data."""

import json

import numpy as np
import pytest

from attention_core import saturation_curve
from tests.figdata import array
from viz.dk_saturation import SCALED, UNSCALED, make_dk_saturation

D_KS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 384)


@pytest.fixture(scope="module")
def sat():
    x = np.random.default_rng(3).standard_normal((9, 48))
    return saturation_curve(x, D_KS, (0, 1, 2))


def test_two_panels_with_scaled_and_unscaled_lines(sat):
    fig = make_dk_saturation(sat, current_d_k=16)
    assert [t.type for t in fig.data] == ["scatter"] * 4
    assert [t.name for t in fig.data] == [SCALED[0], UNSCALED[0]] * 2
    assert [t.xaxis for t in fig.data] == ["x", "x", "x2", "x2"]
    expected = [sat.entropy_scaled, sat.entropy_unscaled, sat.max_scaled, sat.max_unscaled]
    spreads = [
        sat.entropy_scaled_std,
        sat.entropy_unscaled_std,
        sat.max_scaled_std,
        sat.max_unscaled_std,
    ]
    for trace, y, std in zip(fig.data, expected, spreads, strict=True):
        assert list(trace.x) == list(D_KS)
        np.testing.assert_array_equal(np.asarray(trace.y), y)
        np.testing.assert_array_equal(np.asarray(trace.error_y.array), std)
        assert "d_k = %{x}" in trace.hovertemplate
    assert [t.showlegend for t in fig.data] == [True, True, False, False]
    assert fig.data[1].line.dash == "dash" and fig.data[0].line.dash == "solid"
    assert "bits" in fig.data[0].hovertemplate and "bits" not in fig.data[2].hovertemplate


def test_log_d_k_axis_and_reference_lines(sat):
    fig = make_dk_saturation(sat, current_d_k=16)
    for axis in (fig.layout.xaxis, fig.layout.xaxis2):
        assert axis.type == "log"
        assert list(axis.ticktext) == [str(d) for d in D_KS]
    shapes = fig.layout.shapes
    horizontal = sorted(s.y0 for s in shapes if s.y0 == s.y1)
    assert horizontal == pytest.approx(sorted([np.log2(9), 1 / 9]))
    assert [s.x0 for s in shapes if s.x0 == s.x1] == [16, 16]
    labels = [a.text for a in fig.layout.annotations]
    assert "uniform: log2 9" in labels and "uniform: 1/9" in labels
    assert len(make_dk_saturation(sat).layout.shapes) == 2  # no d_k marker when none is given


def test_figure_data_is_finite_also_for_one_token():
    sat = saturation_curve(np.ones((1, 16)), D_KS, (0, 1))
    fig = make_dk_saturation(sat, current_d_k=384)
    for trace in json.loads(fig.to_json())["data"]:
        assert np.isfinite(array(trace["y"])).all()
        assert np.isfinite(array(trace["error_y"]["array"])).all()
    np.testing.assert_array_equal(fig.data[0].y, 0.0)
    np.testing.assert_array_equal(fig.data[2].y, 1.0)
