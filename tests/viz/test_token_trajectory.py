"""The token-trajectory builder: the embedding marked E, then one marker per layer numbered from
0 like the sidebar's Layer slider, probes as stars at a named state."""

import json

import numpy as np
import pytest

from tests.figdata import array
from viz.token_trajectory import make_token_trajectory, state_marks


def test_path_is_marked_by_layer_and_probes_are_drawn():
    rng = np.random.default_rng(1)
    path, probes = rng.standard_normal((7, 2)), rng.standard_normal((3, 2))
    fig = make_token_trajectory(
        path, "<bank>", probes, ["a", "b", "c"], probe_state=4, explained_c=[0.5, 0.2]
    )
    data = json.loads(fig.to_json())["data"]
    line, stars = data
    assert line["mode"] == "lines+markers+text"
    assert line["text"] == state_marks(7) == ["E", "0", "1", "2", "3", "4", "5"]
    assert line["customdata"] == ["embedding", *(f"after layer {i}" for i in range(6))]
    np.testing.assert_allclose(array(line["x"]), path[:, 0])
    np.testing.assert_allclose(array(line["y"]), path[:, 1])
    assert line["name"] == "&lt;bank&gt;" and "· %{customdata}<br>" in line["hovertemplate"]
    assert stars["marker"]["symbol"] == "star" and stars["text"] == ["a", "b", "c"]
    np.testing.assert_allclose(array(stars["x"]), probes[:, 0])
    assert stars["name"] == "probe words (after layer 3)"
    assert "probe %{text} · after layer 3" in stars["hovertemplate"]
    assert fig.layout.xaxis.title.text == "PC1 (50% of variance)"
    assert np.isfinite(array(line["x"])).all() and np.isfinite(array(stars["y"])).all()


def test_bad_shapes_are_clear_errors():
    with pytest.raises(ValueError, match="must be"):
        make_token_trajectory(np.zeros((7, 3)), "x", np.zeros((1, 2)), ["a"], probe_state=1)
    with pytest.raises(ValueError, match="must be"):
        make_token_trajectory(np.zeros((7, 2)), "x", np.zeros((2, 2)), ["a"], probe_state=1)
