"""The distance curves: one line per curve, an optional band, values as given."""

import numpy as np
import pytest

from viz.rotary import make_distance_curves


def test_lines_and_band():
    d = np.arange(5)
    a, b = np.linspace(1, 0, 5), np.linspace(1, 0.5, 5)
    fig = make_distance_curves(
        d, {"rotary": a, "<learned>": b}, bands={"<learned>": (b - 0.1, b + 0.1)}, y_title="cos"
    )
    assert [t.type for t in fig.data] == ["scatter"] * 3
    lines = [t for t in fig.data if t.mode == "lines"]
    np.testing.assert_array_equal(np.asarray(lines[0].y), a)
    np.testing.assert_array_equal(np.asarray(lines[1].x), d)
    assert lines[1].name == "&lt;learned&gt;"
    assert fig.data[1].fill == "toself"  # the band sits behind its line
    assert "distance" in lines[0].hovertemplate
    assert fig.layout.yaxis.title.text == "cos"


def test_mismatch_is_named():
    with pytest.raises(ValueError, match="curve 'x'"):
        make_distance_curves(np.arange(3), {"x": np.zeros(4)})
