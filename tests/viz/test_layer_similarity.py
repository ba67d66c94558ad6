"""The layer-similarity builder: one line per series over layers 0..6, a marked layer."""

import numpy as np
import pytest

from viz.layer_similarity import make_layer_similarity


def test_one_line_per_series_with_layers_on_x():
    series = {"river": np.linspace(0.2, 0.5, 7), "<money>": np.linspace(0.3, 0.1, 7)}
    fig = make_layer_similarity(series, mark_layer=3, title="bank")
    assert [t.type for t in fig.data] == ["scatter", "scatter"]
    assert [t.name for t in fig.data] == ["river", "&lt;money&gt;"]
    for trace, values in zip(fig.data, series.values(), strict=True):
        np.testing.assert_array_equal(trace.x, np.arange(7))
        np.testing.assert_allclose(trace.y, values)
        assert "cosine %{y:.4f}" in trace.hovertemplate
    assert list(fig.layout.xaxis.tickvals) == list(range(7))
    assert fig.layout.shapes[0].x0 == 3  # the dotted marker line
    assert fig.layout.title.text == "bank"
    assert fig.data[0].line.color != fig.data[1].line.color


def test_series_of_different_lengths_are_refused():
    with pytest.raises(ValueError, match="same number of layers"):
        make_layer_similarity({"a": np.zeros(7), "b": np.zeros(6)})
