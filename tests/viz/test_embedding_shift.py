"""The embedding-shift builder: one frame per hidden state, named in the app's one numbering
("embedding", "after layer 0", …), arrows embedding -> after a layer, fixed axes; and the state
names put on another figure's x axis."""

import json

import numpy as np
import pytest

from tests.figdata import array
from viz.embedding_shift import layer_name, make_embedding_shift, name_states
from viz.layer_similarity import make_layer_similarity

TOKENS = ["[CLS]", "the", "bank", "<b>x</b>", "[SEP]"]
PROBES = ["river", "money"]
STATES = ["embedding", *(f"after layer {i}" for i in range(6))]


def test_state_names_count_layers_from_zero():
    assert [layer_name(i) for i in range(7)] == STATES


@pytest.fixture(scope="module")
def coords():
    rng = np.random.default_rng(3)
    return rng.standard_normal((7, 5, 2)), rng.standard_normal((7, 2, 2))


def _xy(trace):
    return np.stack([array(trace["x"]), array(trace["y"])], axis=1)


def test_opens_on_the_chosen_state_with_arrows_from_the_embedding(coords):
    tokens_lt2, probes_lp2 = coords
    fig = make_embedding_shift(
        tokens_lt2, probes_lp2, TOKENS, PROBES, state=3, explained_c=[0.25, 0.125], focus=2
    )
    data = json.loads(fig.to_json())["data"]
    assert [t["type"] for t in data] == ["scatter"] * 4
    assert [t["name"] for t in data[:3]] == ["embedding", "in context", "probe words"]
    np.testing.assert_allclose(_xy(data[0]), tokens_lt2[0])  # the embeddings
    np.testing.assert_allclose(_xy(data[1]), tokens_lt2[3])  # after layer 2
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
    assert "· after layer 2<br>" in fig.data[1].hovertemplate
    assert "probe %{text} · after layer 2" in fig.data[2].hovertemplate
    assert "· embedding<br>" in fig.data[0].hovertemplate
    assert fig.layout.xaxis.title.text == "PC1 (25% of variance)"
    assert fig.layout.yaxis.title.text == "PC2 (12% of variance)"


def test_one_named_frame_per_state_and_a_slider_to_match(coords):
    tokens_lt2, probes_lp2 = coords
    fig = make_embedding_shift(tokens_lt2, probes_lp2, TOKENS, PROBES, state=6)
    assert [f.name for f in fig.frames] == STATES
    for i, frame in enumerate(fig.frames):
        assert list(frame.traces) == [1, 2, 3]
        np.testing.assert_allclose(np.stack([frame.data[0].x, frame.data[0].y], 1), tokens_lt2[i])
        np.testing.assert_allclose(np.stack([frame.data[1].x, frame.data[1].y], 1), probes_lp2[i])
    slider = fig.layout.sliders[0]
    assert slider.active == 6 and len(slider.steps) == 7
    assert [step.label for step in slider.steps] == STATES
    assert list(slider.steps[4].args[0]) == ["after layer 3"]  # the frame it shows
    assert "layer" not in slider.currentvalue.prefix  # the label names the state in full
    # axes fixed around every frame, so nothing jumps while animating
    lo, hi = fig.layout.xaxis.range
    every = np.concatenate([tokens_lt2.reshape(-1, 2), probes_lp2.reshape(-1, 2)])
    assert lo < every[:, 0].min() and hi > every[:, 0].max()
    assert fig.layout.updatemenus[0].buttons[0].args[0] is None  # Play runs every frame


def test_arrows_at_the_embedding_have_no_length(coords):
    tokens_lt2, probes_lp2 = coords
    fig = make_embedding_shift(tokens_lt2, probes_lp2, TOKENS, PROBES, state=0)
    arrows = np.stack([np.array(fig.data[3].x, float), np.array(fig.data[3].y, float)], 1)
    np.testing.assert_allclose(arrows[0::3], arrows[1::3])


def test_mismatched_shapes_and_layers_are_clear_errors(coords):
    tokens_lt2, probes_lp2 = coords
    with pytest.raises(ValueError, match="do not match 4 tokens"):
        make_embedding_shift(tokens_lt2, probes_lp2, TOKENS[:4], PROBES, state=1)
    with pytest.raises(ValueError, match=r"state must be in \[0, 6\]"):
        make_embedding_shift(tokens_lt2, probes_lp2, TOKENS, PROBES, state=7)


def test_name_states_relabels_a_per_state_line_chart():
    values = {"shore": np.linspace(-0.1, 0.1, 7), "<b>": np.zeros(7)}
    fig = name_states(make_layer_similarity(values, mark_layer=3), "relative cosine")
    data = json.loads(fig.to_json())["data"]
    assert [t["x"] for t in data] == [STATES, STATES]
    np.testing.assert_allclose(array(data[0]["y"]), values["shore"])
    assert data[1]["hovertemplate"].startswith("&lt;b&gt;<br>%{x}: relative cosine")
    assert fig.layout.xaxis.type == "category" and fig.layout.xaxis.title.text is None
    assert fig.layout.yaxis.title.text == "relative cosine"
    assert fig.layout.shapes[0].x0 == 3  # the dotted line stays on after layer 2


def test_given_smollm2_s_config_every_builder_names_its_last_state_after_the_final_norm():
    """SmolLM2 is pre-norm: its last state is layer 29's output after the final RMSNorm
    (tests/core/test_display.py checks that against transformers)."""
    from attention_core import load_config
    from viz.knockout import make_knockout_cosine
    from viz.token_trajectory import make_token_trajectory
    from viz.word_effect import make_word_effect

    cfg = load_config("smollm2")
    n, last = cfg.n_layers + 1, "after layer 29 and the final RMSNorm"
    rng = np.random.default_rng(5)
    tokens_lt2, probes_lp2, values_l = (
        rng.standard_normal((n, 5, 2)),
        rng.normal(size=(n, 2, 2)),
        rng.random(n),
    )
    shift = make_embedding_shift(tokens_lt2, probes_lp2, TOKENS, PROBES, state=n - 1, config=cfg)
    assert shift.layout.sliders[0].steps[-1].label == last and shift.frames[-1].name == last
    assert shift.layout.sliders[0].steps[-2].label == "after layer 28"
    lines = make_layer_similarity({"shore": values_l}, config=cfg)
    assert lines.layout.xaxis.ticktext[-1] == last and lines.data[0].customdata[-1] == last
    assert name_states(lines, "cosine", cfg).data[0].x[-1] == last
    path = make_token_trajectory(
        tokens_lt2[:, 0], "bank", probes_lp2[-1], PROBES, probe_state=n - 1, config=cfg
    )
    assert path.data[0].customdata[-1] == last and path.data[1].name == f"probe words ({last})"
    assert make_knockout_cosine(values_l, watched="bank", config=cfg).data[0].x[-1] == last
    moved = make_word_effect(
        {"river": values_l}, {"river": values_l}, values_l, watched="bank", config=cfg
    )
    assert moved.data[0].x[-1] == last
    assert make_knockout_cosine(values_l, watched="bank").data[0].x[-1] == "after layer 29"
