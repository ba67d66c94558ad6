"""The per-head small multiples: one heatmap per head, token axes, shared scale, finite data."""

import json

import numpy as np
import pytest

from attention_core import BlockConfig, fallback_embeddings, make_block_weights, run_block
from tests.figdata import array
from viz.block_patterns import make_block_patterns

TOKENS = ["[CLS]", "the", "bank", "<b>x</b>", "the", "[SEP]"]
ESCAPED = ["[CLS]", "the", "bank", "&lt;b&gt;x&lt;/b&gt;", "the", "[SEP]"]


def _patterns(n_heads: int, n_tokens: int, **switches) -> np.ndarray:
    _, x_td = fallback_embeddings(" ".join(f"w{i}" for i in range(n_tokens)))
    cfg = BlockConfig(n_heads=n_heads, d_k=8, **switches)
    return run_block(x_td, cfg, make_block_weights(cfg, x_td.shape[1])).pattern_hqk


@pytest.mark.parametrize(("n_heads", "rows"), [(1, 1), (4, 1), (5, 2), (12, 3)])
def test_one_heatmap_per_head_in_a_grid(n_heads, rows):
    pattern = _patterns(n_heads, len(TOKENS), causal=True)
    fig = make_block_patterns(pattern, TOKENS)
    assert [t.type for t in fig.data] == ["heatmap"] * n_heads
    for h, trace in enumerate(fig.data):
        np.testing.assert_array_equal(np.asarray(trace.z), pattern[h])
        assert trace.coloraxis == "coloraxis"
        assert trace.hovertemplate.startswith(f"head {h}<br>query")
        assert "key %{x}" in trace.hovertemplate
    titles = [a.text for a in fig.layout.annotations]
    assert titles == [f"head {h}" for h in range(n_heads)]
    assert len({t.yaxis for t in fig.data}) == n_heads
    assert fig.layout.height == 280 * rows + 40
    assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (0.0, 1.0)


def test_token_axes_are_unique_categories_labelled_with_the_tokens():
    fig = make_block_patterns(_patterns(2, len(TOKENS)), TOKENS)
    heat = fig.data[0]
    assert len(set(heat.x)) == len(TOKENS) == len(set(heat.y))  # "the" twice keeps two rows
    for axis in (fig.layout.xaxis, fig.layout.yaxis2):
        assert list(axis.ticktext) == ESCAPED
    assert fig.layout.yaxis.autorange == "reversed"
    assert fig.layout.yaxis.showticklabels is not False  # rows labelled left of the first panel
    assert fig.layout.yaxis2.showticklabels is False


def test_thirteen_tokens_in_four_panels_label_every_token():
    tokens = [f"w{i}" for i in range(13)]
    fig = make_block_patterns(_patterns(4, 13), tokens)
    assert list(fig.layout.xaxis4.ticktext) == tokens and list(fig.layout.yaxis.ticktext) == tokens


def test_long_sentences_thin_the_labels_and_stay_finite():
    tokens = [f"w{i}" for i in range(300)]
    pattern = _patterns(3, 300, temperature=0.05, scale=False)
    fig = make_block_patterns(pattern, tokens)
    assert 10 < len(fig.layout.xaxis.ticktext) <= 16  # three small panels a row
    wide = make_block_patterns(pattern[:2], tokens)
    assert 16 < len(wide.layout.xaxis.ticktext) <= 24  # two wider panels a row
    assert fig.data[0].texttemplate is None
    for trace in json.loads(fig.to_json())["data"]:
        z = array(trace["z"])
        assert z.shape == (300, 300) and np.isfinite(z).all()
        np.testing.assert_allclose(z.sum(axis=1), 1.0, rtol=1e-5)


def test_shape_mismatch_raises():
    with pytest.raises(ValueError, match="do not match"):
        make_block_patterns(np.zeros((2, 3, 3)), ["a", "b"])
