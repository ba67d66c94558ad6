"""The word-effect builder: grouped distance bars per hidden state, one group per hidden word,
hidden-state names as the x axis, cosine and angle in the hover, no NaN."""

import numpy as np
import pytest

from viz.embedding_shift import layer_name
from viz.word_effect import make_word_effect

LENGTH = np.array([11.5, 12.5, 12.0, 12.5, 13.8, 13.1, 10.9])
RIVER_D = np.array([0.0, 2.48, 2.78, 2.87, 2.91, 2.60, 3.03])
RIVER_C = np.array([1.0, 0.980, 0.973, 0.974, 0.978, 0.980, 0.964])
WAS_D = np.array([0.0, 0.25, 1.30, 1.42, 1.68, 1.47, 1.41])
WAS_C = np.array([1.0, 0.9998, 0.994, 0.994, 0.993, 0.994, 0.994])


def _figure():
    return make_word_effect(
        {"river": RIVER_D, "<was>": WAS_D},
        {"river": RIVER_C, "<was>": WAS_C},
        LENGTH,
        watched="bank",
    )


def test_one_bar_trace_per_word_over_the_hidden_states():
    fig = _figure()
    assert [t.type for t in fig.data] == ["bar", "bar"]
    assert [t.name for t in fig.data] == ["“river” hidden", "“&lt;was&gt;” hidden"]
    states = [layer_name(i) for i in range(7)]
    for trace, distance in zip(fig.data, (RIVER_D, WAS_D), strict=True):
        assert list(trace.x) == states
        np.testing.assert_allclose(trace.y, distance)
        assert not np.isnan(np.asarray(trace.y, float)).any()
    assert list(fig.layout.xaxis.categoryarray) == states
    assert fig.layout.xaxis.title.text == "hidden state (layer)"
    assert fig.layout.yaxis.title.text == "how far “bank” moved (distance)"
    assert fig.layout.barmode == "group"
    assert fig.data[0].marker.color != fig.data[1].marker.color


def test_hover_carries_cosine_angle_and_share_of_the_length():
    custom = np.asarray(_figure().data[0].customdata, float)
    np.testing.assert_allclose(custom[:, 0], RIVER_C)
    np.testing.assert_allclose(custom[:, 1], np.degrees(np.arccos(RIVER_C)))
    np.testing.assert_allclose(custom[:, 2], RIVER_D / LENGTH)
    assert custom[0, 1] == 0.0 and not np.isnan(custom).any()
    template = _figure().data[0].hovertemplate
    assert "distance %{y:.3f}" in template and "cosine %{customdata[0]:.4f}" in template


def test_rounding_above_one_gives_an_angle_not_nan():
    fig = make_word_effect(
        {"w": np.zeros(2)}, {"w": np.array([1.0000001, 0.5])}, np.ones(2), watched="x"
    )
    assert not np.isnan(np.asarray(fig.data[0].customdata, float)).any()


def test_mismatched_series_are_refused():
    with pytest.raises(ValueError, match="hidden states"):
        make_word_effect({"a": np.zeros(7)}, {"a": np.zeros(6)}, LENGTH, watched="x")
    with pytest.raises(ValueError, match="hidden states"):
        make_word_effect({"a": np.zeros(7)}, {"b": np.zeros(7)}, LENGTH, watched="x")
