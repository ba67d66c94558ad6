"""The per-head update sizes: one row per head plus the combined ΔE, token columns."""

import numpy as np
import pytest

from attention_core import BlockConfig, fallback_embeddings, make_block_weights, run_block
from viz.head_deltas import COMBINED, make_head_deltas


def test_rows_are_heads_then_the_combined_update():
    tokens, x_td = fallback_embeddings("the <i>bank</i> the")
    cfg = BlockConfig(n_heads=3, d_k=4)
    out = run_block(x_td, cfg, make_block_weights(cfg, x_td.shape[1]))
    head_norm = np.linalg.norm(out.head_delta_htd, axis=-1)
    total = np.linalg.norm(out.delta_td, axis=-1)
    fig = make_head_deltas(head_norm, total, tokens)
    heat = fig.data[0]
    assert heat.type == "heatmap"
    assert list(heat.y) == ["head 0", "head 1", "head 2", COMBINED]
    np.testing.assert_allclose(np.asarray(heat.z), np.vstack([head_norm, total]), rtol=1e-6)
    assert list(fig.layout.xaxis.ticktext) == [
        "the",
        "&lt;",
        "i",
        "&gt;",
        "bank",
        "&lt;",
        "/",
        "i",
        "&gt;",
        "the",
    ]
    assert len(set(heat.x)) == len(tokens)
    assert "‖update‖" in heat.hovertemplate and "token %{x}" in heat.hovertemplate
    assert heat.zmin == 0.0 and heat.zmax == pytest.approx(max(head_norm.max(), total.max()))
    # the combined update is the sum of the proposals, so it is never longer than their sum
    assert np.all(total <= head_norm.sum(axis=0) + 1e-6)


def test_shape_mismatch_raises():
    with pytest.raises(ValueError, match="do not match"):
        make_head_deltas(np.zeros((2, 3)), np.zeros(3), ["a", "b"])
