"""Structure of the guided tour's figures: trace types, shapes, token labels, hovers, escaping."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from attention_core import sinusoidal_positions, square_law, trace_sentence
from tests.figdata import array
from viz.learn_cost import make_cost_curve
from viz.learn_matrix import make_small_matrix
from viz.learn_positions import make_positions
from viz.learn_split import make_cost_split
from viz.learn_strip import make_embedding_strip, robust_range

SENTENCE = "the <b>bold</b> bank & the bank"


@pytest.fixture(scope="module")
def trace(model):
    return trace_sentence(model, SENTENCE)


def _heatmap(fig: go.Figure) -> go.Heatmap:
    assert len(fig.data) == 1 and isinstance(fig.data[0], go.Heatmap)
    return fig.data[0]


def test_strip_rows_are_tokens_and_values_are_the_vectors(trace):
    fig = make_embedding_strip(trace.word_td, trace.tokens.tokens)
    hm = _heatmap(fig)
    np.testing.assert_array_equal(array(hm.z), trace.word_td)
    assert fig.layout.yaxis.ticktext == tuple(
        t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        for t in trace.tokens.tokens
    )
    assert len(set(hm.y)) == trace.n_tokens  # repeated "the" and "bank" keep their own rows
    assert "<b>" not in "".join(hm.y) and "&lt;" in "".join(hm.y)
    assert "dimension %{x}" in hm.hovertemplate and "%{z:.4f}" in hm.hovertemplate
    assert hm.zmid is None and hm.zmin == -hm.zmax  # symmetric around 0
    assert np.isfinite(array(hm.z)).all()


def test_strip_with_plain_labels_and_robust_colour_range():
    vectors = np.zeros((2, 100), np.float32)
    vectors[0, :] = 0.5
    vectors[1, 0] = 40.0  # one outlier must not wash out the rest
    fig = make_embedding_strip(vectors, ["E", "<i>ΔE</i>"], token_axis=False)
    hm = _heatmap(fig)
    assert list(hm.y) == ["E", "&lt;i&gt;ΔE&lt;/i&gt;"]
    assert hm.zmax == pytest.approx(robust_range(vectors)) and hm.zmax < 1.0
    assert robust_range(np.zeros((2, 3))) == 1.0
    with pytest.raises(ValueError, match="do not match 3 labels"):
        make_embedding_strip(vectors, ["a", "b", "c"])


def test_positions_rows_are_positions(trace):
    sinus = sinusoidal_positions(trace.n_tokens, 384)
    hm = _heatmap(make_positions(sinus, n_dims=64, title="sinusoidal"))
    z = array(hm.z)
    assert z.shape == (trace.n_tokens, 64)
    np.testing.assert_allclose(z, sinus[:, :64])
    assert list(hm.y) == list(range(trace.n_tokens))
    assert "position %{y}" in hm.hovertemplate
    full = _heatmap(make_positions(trace.position_td))
    assert array(full.z).shape == trace.position_td.shape
    with pytest.raises(ValueError, match="positions must be"):
        make_positions(np.zeros(4))


def test_small_matrix_prints_values_and_labels_columns(trace):
    q = trace.q_lhqe[2, 0][:, :8]
    fig = make_small_matrix(q, trace.tokens.tokens, [f"e{j}" for j in range(8)], title="Q")
    hm = _heatmap(fig)
    np.testing.assert_allclose(array(hm.z), q)
    assert list(hm.x) == [f"e{j}" for j in range(8)]
    assert hm.texttemplate == "%{z:.2f}"
    assert fig.layout.yaxis.tickvals == tuple(hm.y)
    assert "token %{y}" in hm.hovertemplate
    with pytest.raises(ValueError, match="does not match"):
        make_small_matrix(q, trace.tokens.tokens, ["e0"])


def test_cost_curve_shows_measurements_next_to_n_squared():
    n = np.array([16, 32, 64, 128])
    seconds = np.array([0.01, 0.015, 0.04, 0.16])
    nbytes = 2 * 6 * 12 * 4 * n**2
    fig = make_cost_curve(n, seconds, nbytes)
    assert len(fig.data) == 4 and all(isinstance(t, go.Scatter) for t in fig.data)
    time_measured, time_square, mem_measured, mem_square = fig.data
    np.testing.assert_allclose(array(time_measured.y), seconds * 1e3)
    np.testing.assert_allclose(array(time_square.y), square_law(n, seconds * 1e3))
    np.testing.assert_allclose(array(mem_measured.y), nbytes / 1e6)
    np.testing.assert_allclose(array(mem_square.y), nbytes / 1e6)  # memory is exactly n²
    assert time_square.line.dash == "dash"
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert "tokens" in time_measured.hovertemplate and "ms" in time_measured.hovertemplate
    with pytest.raises(ValueError, match="sizes"):
        make_cost_curve(n, seconds[:2], nbytes)


def test_cost_split_stacks_attention_and_dense_shares_to_100():
    n = np.array([16, 64, 512])
    attention, dense = np.array([0.001, 0.004, 0.05]), np.array([0.003, 0.008, 0.1])
    fig = make_cost_split(n, attention, dense)
    assert len(fig.data) == 2 and all(isinstance(t, go.Bar) for t in fig.data)
    att, den = fig.data
    assert (att.name, den.name) == ("attention", "dense layers")
    np.testing.assert_allclose(array(att.y), 100 * attention / (attention + dense))
    np.testing.assert_allclose(array(att.y) + array(den.y), 100.0)
    np.testing.assert_allclose(array(att.customdata), attention * 1e3)
    assert list(att.x) == ["16", "64", "512"] and fig.layout.barmode == "stack"
    assert "ms" in att.hovertemplate and "tokens" in att.hovertemplate
    assert fig.layout.yaxis.range == (0, 100)
    with pytest.raises(ValueError, match="sizes"):
        make_cost_split(n, attention[:2], dense)
