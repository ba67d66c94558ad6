"""The all-heads grid: downsampling, ordering, tiling and the figure's structure and size."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from viz.head_grid import (
    MAX_TILE,
    list_heads,
    make_head_grid,
    order_heads,
    pool_blocks,
    tile,
)

L, H = 6, 12


def _patterns(n: int, seed: int = 0) -> np.ndarray:
    logits = np.random.default_rng(seed).normal(size=(L, H, n, n)).astype(np.float32)
    p = np.exp(logits)
    return p / p.sum(-1, keepdims=True)


def _metrics(seed: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"entropy (bits)": rng.uniform(0, 3, (L, H)), "previous-token share": rng.random((L, H))}


@pytest.mark.parametrize("n", [3, 48])
def test_pool_blocks_keeps_short_patterns(n):
    p = _patterns(n)
    thumbs, factor = pool_blocks(p)
    assert factor == 1 and thumbs.dtype == np.float32
    np.testing.assert_array_equal(thumbs, p)


def test_pool_blocks_matches_a_loop_with_a_short_last_block():
    p = _patterns(101)[:1, :2]
    thumbs, factor = pool_blocks(p)
    assert factor == 3 and thumbs.shape == (1, 2, 34, 34)  # 33 blocks of 3, one of 2
    for i in range(34):
        for j in range(34):
            block = p[..., 3 * i : 3 * i + 3, 3 * j : 3 * j + 3]
            np.testing.assert_allclose(thumbs[..., i, j], block.sum(-1).mean(-1), rtol=1e-5)
    np.testing.assert_allclose(thumbs.sum(-1), 1.0, rtol=1e-5)  # still a pattern: rows sum to 1


def test_pooled_previous_token_head_stays_bright():
    n = 320
    p = np.zeros((1, 1, n, n), np.float32)
    p[0, 0, np.arange(1, n), np.arange(n - 1)] = 1.0
    p[0, 0, 0, 0] = 1.0
    thumbs, factor = pool_blocks(p)
    assert factor == 7
    assert np.diagonal(thumbs[0, 0]).min() >= 4 / 5 - 1e-6  # the last block has 5 rows


@pytest.mark.parametrize("n", [49, 128, 300, 512])
def test_pool_blocks_never_exceeds_the_tile_size(n):
    thumbs, factor = pool_blocks(np.zeros((1, 1, n, n), np.float32))
    assert thumbs.shape[-1] <= MAX_TILE and factor == -(-n // MAX_TILE)


def test_pool_blocks_rejects_non_square():
    with pytest.raises(ValueError, match="square"):
        pool_blocks(np.zeros((1, 1, 3, 4)))


def test_order_heads_by_number_and_by_value():
    values = np.tile(np.arange(H, dtype=float), (L, 1))
    values[2] = values[2][::-1]
    np.testing.assert_array_equal(order_heads(H, [0, 2], 3), [[0, 1, 2], [0, 1, 2]])
    np.testing.assert_array_equal(order_heads(H, [0, 2], 2, values), [[11, 10], [0, 1]])
    np.testing.assert_array_equal(order_heads(H, [2], 2, values, descending=False), [[11, 10]])
    with pytest.raises(ValueError, match="top"):
        order_heads(H, [0], 13)


def test_list_heads_ranks_across_layers():
    values = np.zeros((L, H))
    values[4, 7], values[1, 3] = 0.9, 0.5
    order = order_heads(H, [1, 4], 2, values)
    layer_n, head_n = list_heads(order, [1, 4], values)
    assert (layer_n[0], head_n[0]) == (4, 7) and (layer_n[1], head_n[1]) == (1, 3)
    layer_n, head_n = list_heads(order_heads(H, [1, 4], 2), [1, 4])
    assert layer_n.tolist() == [1, 1, 4, 4] and head_n.tolist() == [0, 1, 0, 1]


def test_tile_places_thumbnails_with_nan_gaps():
    thumbs = np.arange(6, dtype=np.float32)[:, None, None] * np.ones((6, 2, 2), np.float32)
    out = tile(thumbs, 2, 3, gap=1)
    assert out.shape == (5, 8)
    assert np.isnan(out[2]).all() and np.isnan(out[:, 2]).all() and np.isnan(out[:, 5]).all()
    assert (out[3:5, 6:8] == 5).all() and (out[0:2, 3:5] == 1).all()
    assert np.isfinite(out).sum() == 6 * 4
    with pytest.raises(ValueError, match="grid"):
        tile(thumbs, 2, 2, gap=1)


def test_grid_figure_structure():
    p = _patterns(7)
    metrics = _metrics()
    fig = make_head_grid(p, metrics, list(range(L)), order_heads(H, range(L), H))
    heat, dots = fig.data
    assert (heat.type, dots.type) == ("heatmap", "scatter")
    assert heat.colorscale == go.Heatmap(colorscale="Cividis").colorscale
    assert (heat.zmin, heat.zmax) == (0, 1)
    z = np.asarray(heat.z)
    step = 7 + 1
    assert z.shape == (L * step - 1, H * step - 1) and z.dtype == np.float32
    assert np.isfinite(z).sum() == L * H * 49  # NaN only in the gaps
    np.testing.assert_allclose(
        z[3 * step : 3 * step + 7, 5 * step : 5 * step + 7], p[3, 5], atol=5e-4
    )
    np.testing.assert_array_equal(z, np.round(z, 3))
    assert list(fig.layout.xaxis.ticktext) == [f"H{h}" for h in range(H)]
    assert list(fig.layout.yaxis.ticktext) == [f"L{la}" for la in range(L)]
    assert len(dots.x) == L * H
    custom = np.asarray(dots.customdata)
    assert custom[17, 0] == 1 and custom[17, 1] == 5
    assert custom[17, 3] == pytest.approx(metrics["previous-token share"][1, 5], abs=1e-4)
    assert "entropy (bits) %{customdata[2]:.3f}" in dots.hovertemplate
    assert "previous-token share %{customdata[3]:.3f}" in dots.hovertemplate
    assert not fig.layout.annotations


def test_ranked_grid_labels_columns_by_rank_and_tags_tiles():
    p, metrics = _patterns(4), _metrics()
    order = order_heads(H, [2, 5], 3, metrics["entropy (bits)"])
    fig = make_head_grid(p, metrics, [2, 5], order, ranked_by="entropy (bits)")
    assert list(fig.layout.xaxis.ticktext) == ["#1", "#2", "#3"]
    assert list(fig.layout.yaxis.ticktext) == ["L2", "L5"]
    best = int(order[1, 0])
    assert fig.layout.annotations[3].text == f"H{best} · {metrics['entropy (bits)'][5, best]:.2f}"
    custom = np.asarray(fig.data[1].customdata)
    assert custom[3, :2].tolist() == [5, best]


def test_grid_json_stays_small_at_512_tokens():
    thumbs, factor = pool_blocks(_patterns(512))
    fig = make_head_grid(
        np.round(thumbs, 3), _metrics(), list(range(L)), order_heads(H, range(L), H)
    )
    assert factor == 11
    assert len(fig.to_json()) < 1_500_000  # the issue allows 5 MB
