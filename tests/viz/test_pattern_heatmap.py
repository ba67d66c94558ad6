"""The pattern heatmap builder: data, token axes, hover, masking gaps, transposition."""

import json

import numpy as np
import pytest

from attention_core import attention_steps
from tests.figdata import array
from viz.pattern_heatmap import make_pattern_heatmap

TOKENS = ["[CLS]", "the", "bank", "<b>x</b>", "the", "[SEP]"]


@pytest.fixture(scope="module")
def steps():
    rng = np.random.default_rng(0)
    scores = rng.standard_normal((6, 6)).astype(np.float32) * 4
    return attention_steps(scores, 32, causal=True)


def test_pattern_data_and_axes(steps):
    fig = make_pattern_heatmap(steps.pattern, TOKENS)
    heat = fig.data[0]
    assert heat.type == "heatmap"
    np.testing.assert_array_equal(np.asarray(heat.z), steps.pattern)
    # repeated "the" keeps two separate rows: categories are unique per position
    assert len(set(heat.x)) == len(TOKENS) == len(set(heat.y))
    assert list(fig.layout.xaxis.ticktext) == [
        "[CLS]",
        "the",
        "bank",
        "&lt;b&gt;x&lt;/b&gt;",
        "the",
        "[SEP]",
    ]
    assert "query" in heat.hovertemplate and "key" in heat.hovertemplate
    assert (heat.zmin, heat.zmax) == (0.0, 1.0)
    assert fig.layout.yaxis.autorange == "reversed"


def test_masked_cells_become_gaps_not_infinities(steps):
    fig = make_pattern_heatmap(steps.masked, TOKENS, stage="masked")
    z = array(json.loads(fig.to_json())["data"][0]["z"])
    upper = np.triu(np.ones((6, 6), bool), k=1)
    assert np.isnan(z[upper]).all()
    assert np.isfinite(z[~upper]).all()
    assert fig.data[0].zmid == 0.0


def test_transpose_swaps_rows_and_columns(steps):
    fig = make_pattern_heatmap(steps.pattern, TOKENS, transpose=True)
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), steps.pattern.T)
    assert "queries" in fig.layout.xaxis.title.text


def test_numbers_printed_only_for_short_sentences(steps):
    assert make_pattern_heatmap(steps.pattern, TOKENS).data[0].texttemplate
    long = np.full((40, 40), 1 / 40, np.float32)
    fig = make_pattern_heatmap(long, [f"w{i}" for i in range(40)])
    assert fig.data[0].texttemplate is None
    quiet = make_pattern_heatmap(steps.scores, TOKENS, stage="scores", numbers=False)
    assert quiet.data[0].texttemplate is None
    assert "%{z:.4f}" in quiet.data[0].hovertemplate  # the value is still on hover


def test_shape_mismatch_is_a_clear_error(steps):
    with pytest.raises(ValueError, match="does not match 5 tokens"):
        make_pattern_heatmap(steps.pattern, TOKENS[:5])
