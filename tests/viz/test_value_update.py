"""The weight bars of the value-update page: one bar per key, coloured and outlined right."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from viz.value_update import BAR, QUERY, make_value_update

TOKENS = ["[CLS]", "dirty", "quantum", "<b>x</b>", "dirty", "[SEP]"]


def _fig(query: int | None = 2) -> tuple[go.Figure, np.ndarray, np.ndarray]:
    weights = np.array([0.5, 0.2, 0.1, 0.1, 0.05, 0.05], np.float32)
    norms = np.array([0.2, 3.0, 2.5, 1.0, 3.0, 2.0], np.float32)
    return make_value_update(weights, norms, TOKENS, query), weights, norms


def test_one_bar_per_key_with_unique_escaped_categories():
    fig, weights, _ = _fig()
    (bar,) = fig.data
    assert bar.type == "bar"
    assert list(bar.x) == [
        "0:[CLS]",
        "1:dirty",
        "2:quantum",
        "3:&lt;b&gt;x&lt;/b&gt;",
        "4:dirty",
        "5:[SEP]",
    ]
    np.testing.assert_array_equal(bar.y, weights)
    assert list(fig.layout.xaxis.ticktext) == [
        "[CLS]",
        "dirty",
        "quantum",
        "&lt;b&gt;x&lt;/b&gt;",
        "dirty",
        "[SEP]",
    ]


def test_hover_carries_value_norms_and_contributions():
    fig, weights, norms = _fig()
    bar = fig.data[0]
    np.testing.assert_allclose(
        np.asarray(bar.customdata), np.column_stack([norms, weights * norms])
    )
    assert "%{customdata[0]:.3f}" in bar.hovertemplate and "%{y:.4f}" in bar.hovertemplate
    assert bar.texttemplate == "%{y:.2f}"


def test_the_query_bar_is_orange():
    fig = _fig(query=2)[0]
    assert list(fig.data[0].marker.color) == [BAR, BAR, QUERY, BAR, BAR, BAR]
    assert list(_fig(query=None)[0].data[0].marker.color) == [BAR] * 6


def test_long_sentences_drop_bar_numbers_and_thin_ticks():
    tokens = [f"w{i}" for i in range(300)]
    weights = np.full(300, 1 / 300, np.float32)
    fig = make_value_update(weights, np.ones(300, np.float32), tokens, 299)
    assert fig.data[0].texttemplate is None
    assert len(fig.layout.xaxis.tickvals) <= 60
    assert np.isfinite(np.asarray(fig.data[0].y)).all()


def test_shape_mismatch_raises():
    with pytest.raises(ValueError, match="3 tokens"):
        make_value_update(np.ones(2), np.ones(2), ["a", "b", "c"])
