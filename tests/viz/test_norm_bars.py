"""Bars of update sizes: heads or tokens on the x axis, one bar highlighted."""

from __future__ import annotations

import numpy as np
import pytest

from viz.norm_bars import BAR, HIGHLIGHT, make_norm_bars


def test_head_bars_with_highlight():
    norms = np.linspace(0.1, 1.2, 12).astype(np.float32)
    fig = make_norm_bars(norms, [f"H{h}" for h in range(12)], highlight=4, y_title="‖ΔE_h‖")
    (bar,) = fig.data
    assert bar.type == "bar" and list(bar.x) == [f"H{h}" for h in range(12)]
    np.testing.assert_array_equal(bar.y, norms)
    assert bar.marker.color[4] == HIGHLIGHT and set(bar.marker.color[:4]) == {BAR}
    assert bar.hovertemplate == "%{x}<br>‖ΔE_h‖ %{y:.4f}<extra></extra>"


def test_token_axis_uses_unique_categories_and_bare_tick_labels():
    tokens = ["[CLS]", "the", "<i>", "the", "[SEP]"]
    fig = make_norm_bars(np.arange(5, dtype=np.float32), tokens, token_axis=True)
    assert list(fig.data[0].x) == ["0:[CLS]", "1:the", "2:&lt;i&gt;", "3:the", "4:[SEP]"]
    assert list(fig.layout.xaxis.ticktext) == ["[CLS]", "the", "&lt;i&gt;", "the", "[SEP]"]
    assert set(fig.data[0].marker.color) == {BAR}


def test_shape_mismatch_raises():
    with pytest.raises(ValueError, match="3 labels"):
        make_norm_bars(np.ones(2), ["a", "b", "c"])
