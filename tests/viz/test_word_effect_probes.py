"""The probe builder of the hide-a-word page: with and without bars per probe, escaped labels."""

import numpy as np
import pytest

from viz.word_effect_probes import make_word_effect_probes


def test_grouped_bars_with_and_without_the_word():
    with_p, without_p = np.array([0.38, 0.30, 0.41]), np.array([0.38, 0.31, 0.46])
    fig = make_word_effect_probes(
        with_p,
        without_p,
        ["shore", "<b>x</b>", "money"],
        hidden_word="river",
        state_label="after layer 1",
    )
    assert [t.type for t in fig.data] == ["bar", "bar"]
    assert [t.name for t in fig.data] == ["with “river”", "“river” hidden"]
    assert list(fig.data[0].x) == ["shore", "&lt;b&gt;x&lt;/b&gt;", "money"]
    np.testing.assert_allclose(fig.data[0].y, with_p)
    np.testing.assert_allclose(fig.data[1].y, without_p)
    assert fig.layout.yaxis.title.text == "cosine similarity (after layer 1)"
    assert fig.layout.xaxis.title.text == "probe word"
    assert "after layer 1" in fig.data[1].hovertemplate


def test_lengths_must_match():
    with pytest.raises(ValueError, match="probe words"):
        make_word_effect_probes(
            np.zeros(2), np.zeros(3), ["a", "b"], hidden_word="w", state_label="s"
        )
