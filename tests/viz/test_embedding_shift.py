"""The embedding-shift builder: one frame per layer, arrows static -> contextual, fixed axes."""

import json

import numpy as np
import pytest

from tests.figdata import array
from viz.embedding_shift import make_embedding_shift

TOKENS = ["[CLS]", "the", "bank", "<b>x</b>", "[SEP]"]
PROBES = ["river", "money"]


@pytest.fixture(scope="module")
def coords():
    rng = np.random.default_rng(3)
    return rng.standard_normal((7, 5, 2)), rng.standard_normal((7, 2, 2))


def _xy(trace):
    return np.stack([array(trace["x"]), array(trace["y"])], axis=1)


def test_opens_on_the_chosen_layer_with_arrows_from_static(coords):
    tokens_lt2, probes_lp2 = coords
    fig = make_embedding_shift(tokens_lt2, probes_lp2, TOKENS, PROBES, layer=3,
                               explained_c=[0.25, 0.125], focus=2)  # fmt: skip
    data = json.loads(fig.to_json())["data"]
    assert [t["type"] for t in data] == ["scatter"] * 4
    np.testing.assert_allclose(_xy(data[0]), tokens_lt2[0])  # static
    np.testing.assert_allclose(_xy(data[1]), tokens_lt2[3])  # contextual at layer 3
    np.testing.assert_allclose(_xy(data[2]), probes_lp2[3])
    arrows = _xy(data[3])  # [static, contextual, gap] per token
    assert arrows.shape == (15, 2)
    np.testing.assert_allclose(arrows[0::3], tokens_lt2[0])
    np.testing.assert_allclose(arrows[1::3], tokens_lt2[3])
    assert np.isnan(arrows[2::3]).all()  # the only NaN: gaps between arrows
    assert fig.data[3].marker.symbol == "arrow" and fig.data[3].marker.angleref == "previous"
    assert list(fig.data[1].text) == ["[CLS]", "the", "bank", "&lt;b&gt;x&lt;/b&gt;", "[SEP]"]
    assert list(fig.data[2].text) == PROBES
    assert fig.data[1].marker.size[2] > fig.data[1].marker.size[1]  # the focus token
    assert "layer 3" in fig.data[1].hovertemplate
    assert fig.layout.xaxis.title.text == "PC1 (25% of variance)"
    assert fig.layout.yaxis.title.text == "PC2 (12% of variance)"


def test_one_frame_per_layer_and_a_slider_to_match(coords):
    tokens_lt2, probes_lp2 = coords
    fig = make_embedding_shift(tokens_lt2, probes_lp2, TOKENS, PROBES, layer=6)
    assert [f.name for f in fig.frames] == [str(i) for i in range(7)]
    for i, frame in enumerate(fig.frames):
        assert list(frame.traces) == [1, 2, 3]
        np.testing.assert_allclose(np.stack([frame.data[0].x, frame.data[0].y], 1), tokens_lt2[i])
        np.testing.assert_allclose(np.stack([frame.data[1].x, frame.data[1].y], 1), probes_lp2[i])
    slider = fig.layout.sliders[0]
    assert slider.active == 6 and len(slider.steps) == 7
    assert list(slider.steps[4].args[0]) == ["4"]
    # axes fixed around every frame, so nothing jumps while animating
    lo, hi = fig.layout.xaxis.range
    every = np.concatenate([tokens_lt2.reshape(-1, 2), probes_lp2.reshape(-1, 2)])
    assert lo < every[:, 0].min() and hi > every[:, 0].max()
    assert fig.layout.updatemenus[0].buttons[0].args[0] is None  # Play runs every frame


def test_layer_zero_arrows_have_no_length(coords):
    tokens_lt2, probes_lp2 = coords
    fig = make_embedding_shift(tokens_lt2, probes_lp2, TOKENS, PROBES, layer=0)
    arrows = np.stack([np.array(fig.data[3].x, float), np.array(fig.data[3].y, float)], 1)
    np.testing.assert_allclose(arrows[0::3], arrows[1::3])


def test_mismatched_shapes_and_layers_are_clear_errors(coords):
    tokens_lt2, probes_lp2 = coords
    with pytest.raises(ValueError, match="do not match 4 tokens"):
        make_embedding_shift(tokens_lt2, probes_lp2, TOKENS[:4], PROBES, layer=1)
    with pytest.raises(ValueError, match=r"layer must be in \[0, 6\]"):
        make_embedding_shift(tokens_lt2, probes_lp2, TOKENS, PROBES, layer=7)
