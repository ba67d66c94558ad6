"""The next-token bars: one bar per candidate, probabilities as given, token labels escaped."""

import numpy as np
import pytest

from viz.next_token import make_next_token_bars

TOKENS = ["▁Paris", "▁the", "<b>", "▁Paris"]
PROBS = np.array([0.6, 0.2, 0.1, 0.05], np.float32)


def test_bars_hold_the_probabilities_and_the_tokens():
    fig = make_next_token_bars(TOKENS, PROBS, chosen=1)
    bar = fig.data[0]
    assert bar.type == "bar" and bar.orientation == "h"
    np.testing.assert_array_equal(np.asarray(bar.x), PROBS.astype(np.float64))
    assert len(set(bar.y)) == 4  # the two "▁Paris" stay two bars
    assert list(fig.layout.yaxis.ticktext) == ["▁Paris", "▁the", "&lt;b&gt;", "▁Paris"]
    assert "probability" in bar.hovertemplate
    assert list(bar.marker.color).count("#E69F00") == 1 and bar.marker.color[1] == "#E69F00"
    assert fig.layout.yaxis.autorange == "reversed"


def test_mismatch_is_a_clear_error():
    with pytest.raises(ValueError, match="3 probabilities for 4 tokens"):
        make_next_token_bars(TOKENS, PROBS[:3])
