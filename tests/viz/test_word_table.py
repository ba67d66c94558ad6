"""The word table: transposed (columns = queries), masked cells labelled, words on both axes."""

import numpy as np
import pytest

from viz.word_table import make_word_table

WORDS = ["dirty", "quantum", "plumbing"]
NOTE_QK = np.array([[1.0, 0, 0], [0.9, 0.1, 0], [0.55, 0.4, 0.05]])  # rows = queries


def test_columns_are_queries_and_masked_cells_say_so():
    fig = make_word_table(NOTE_QK, WORDS, masked_qk=np.triu(np.ones((3, 3), bool), 1))
    heat = fig.data[0]
    assert heat.type == "heatmap"
    np.testing.assert_array_equal(np.asarray(heat.z), NOTE_QK.T)
    assert list(fig.layout.xaxis.ticktext) == WORDS == list(fig.layout.yaxis.ticktext)
    assert heat.text[1][0] == "0 · masked"  # key quantum, query dirty
    assert heat.text[0][2] == "0.55"  # key dirty, query plumbing
    assert "query" in heat.hovertemplate and "key" in heat.hovertemplate


def test_shape_mismatch():
    with pytest.raises(ValueError, match="3 words"):
        make_word_table(NOTE_QK[:2], WORDS)
