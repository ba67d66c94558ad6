"""The all-heads grid: downsampling, ordering, tiling, and the role scores it sorts by (against
TransformerLens's detector on transformers' attentions, tests/roles_reference)."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import trace_sentence
from attention_core.lessons.explain import copy_stripe_q
from attention_core.lessons.head_order import (
    SORTS,
    list_heads,
    order_heads,
    role_figures,
    role_labels,
)
from attention_core.methods.pack import MAX_TILE, pool_blocks, trace_roles

L, H = 6, 12


def _patterns(n: int, seed: int = 0) -> np.ndarray:
    logits = np.random.default_rng(seed).normal(size=(L, H, n, n)).astype(np.float32)
    p = np.exp(logits)
    return p / p.sum(-1, keepdims=True)


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


@pytest.mark.parametrize(("key", "closing"), [("minilm", True), ("smollm2", False)])
def test_role_figures_are_the_reference_scores_by_label(engines, key, closing):
    from tests.roles_reference import reference_scores

    text = "the dog saw the dog and the other dog saw the dog too"
    scores = trace_roles(trace_sentence(engines[key], text))
    labels = role_labels(scores)
    assert list(labels) == [r for r in SORTS if closing or r != "last_token"]
    figures = role_figures(scores)
    ref = reference_scores(key, text)
    assert list(figures) == list(labels.values())
    for role, label in labels.items():
        np.testing.assert_allclose(figures[label], ref[role], atol=1e-5, err_msg=role)


def test_order_heads_ranks_a_score_with_nothing_to_measure_last():
    values = np.array([[0.2, np.nan, 0.7]])
    np.testing.assert_array_equal(order_heads(3, [0], 3, values), [[2, 0, 1]])


def test_copy_stripe_reads_one_step_right_of_the_earlier_copy():
    n = 4
    p = np.zeros((2 * n, 2 * n))
    for i in range(n, 2 * n):
        p[i, i - n + 1] = 0.1 * (i - n + 1)  # query i, key i - n + 1
    np.testing.assert_allclose(copy_stripe_q(p, n), [0.1, 0.2, 0.3, 0.4])
    with pytest.raises(ValueError, match="read twice"):
        copy_stripe_q(p, 5)
