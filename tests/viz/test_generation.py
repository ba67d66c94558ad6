"""The generation step heatmap: heads × keys, KV groups labelled and separated, prompt marked."""

import numpy as np
import pytest

from viz.generation import head_labels, make_step_heatmap

TOKENS = ["The", "␣capital", "␣of", "␣France", "␣is", "␣Paris"]


@pytest.fixture(scope="module")
def pattern():
    rng = np.random.default_rng(1)
    p = rng.random((9, 6))
    return (p / p.sum(1, keepdims=True)).astype(np.float32)


def test_rows_are_heads_and_columns_the_tokens(pattern):
    fig = make_step_heatmap(pattern, TOKENS, 3, n_prompt=5)
    heat = fig.data[0]
    assert heat.type == "heatmap"
    np.testing.assert_array_equal(np.asarray(heat.z), pattern)
    assert list(heat.y) == head_labels(9, 3)
    assert heat.y[4] == "H4 · KV1"
    assert list(fig.layout.xaxis.ticktext) == TOKENS
    assert "head" in heat.hovertemplate and "key" in heat.hovertemplate
    lines = fig.layout.shapes
    assert [s.y0 for s in lines[:2]] == [2.5, 5.5]  # between the three KV groups
    assert lines[2].x0 == 4.5  # after the prompt's five tokens


def test_bad_shapes_are_named(pattern):
    with pytest.raises(ValueError, match="6 keys but 5 tokens"):
        make_step_heatmap(pattern, TOKENS[:5], 3)
    with pytest.raises(ValueError, match="groups of 4"):
        make_step_heatmap(pattern, TOKENS, 4)
