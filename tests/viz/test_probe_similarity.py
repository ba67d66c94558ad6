"""The probe-similarity builder: grouped bars, static next to contextual, per probe."""

import numpy as np
import pytest

from viz.probe_similarity import make_probe_similarity


def test_two_bars_per_probe_with_values():
    before, after = np.array([0.25, 0.19, 0.36]), np.array([0.49, 0.31, 0.44])
    fig = make_probe_similarity(before, after, ["river", "<i>", "money"], after_label="layer 3")
    assert [t.type for t in fig.data] == ["bar", "bar"]
    assert fig.layout.barmode == "group"
    assert list(fig.data[0].x) == ["river", "&lt;i&gt;", "money"]
    np.testing.assert_allclose(fig.data[0].y, before)
    np.testing.assert_allclose(fig.data[1].y, after)
    assert [t.name for t in fig.data] == ["static (layer 0)", "layer 3"]
    assert "cosine %{y:.4f}" in fig.data[1].hovertemplate


def test_length_mismatch_is_a_clear_error():
    with pytest.raises(ValueError, match="2 probe words"):
        make_probe_similarity(np.zeros(3), np.zeros(3), ["a", "b"], after_label="x")
