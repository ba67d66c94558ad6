"""The probe-similarity builder: grouped bars per probe, the embedding next to after a layer,
named in the app's numbering and measured as the cosine minus its mean over the probes."""

import numpy as np
import pytest

from viz.probe_similarity import RELATIVE, make_probe_similarity


def test_two_bars_per_probe_with_values():
    before, after = np.array([-0.05, -0.15, 0.2]), np.array([0.04, -0.1, 0.06])
    fig = make_probe_similarity(
        before, after, ["river", "<i>", "money"], after_label="after layer 2"
    )
    assert [t.type for t in fig.data] == ["bar", "bar"]
    assert fig.layout.barmode == "group"
    assert list(fig.data[0].x) == ["river", "&lt;i&gt;", "money"]
    np.testing.assert_allclose(fig.data[0].y, before)
    np.testing.assert_allclose(fig.data[1].y, after)
    assert [t.name for t in fig.data] == ["embedding", "after layer 2"]
    assert RELATIVE == "cosine − mean over the probes"
    assert fig.layout.yaxis.title.text == RELATIVE and fig.layout.yaxis.zeroline
    assert f"{RELATIVE} %{{y:+.4f}}" in fig.data[1].hovertemplate
    assert fig.data[0].texttemplate == "%{y:+.3f}"  # signed: above or below the probes' mean


def test_raw_cosines_can_be_drawn_too():
    fig = make_probe_similarity(
        np.array([0.2]), np.array([0.4]), ["a"], after_label="x", before_label="y", value="cosine"
    )
    assert [t.name for t in fig.data] == ["y", "x"]
    assert fig.layout.yaxis.title.text == "cosine" and "cosine %{y" in fig.data[0].hovertemplate


def test_length_mismatch_is_a_clear_error():
    with pytest.raises(ValueError, match="2 probe words"):
        make_probe_similarity(np.zeros(3), np.zeros(3), ["a", "b"], after_label="x")
