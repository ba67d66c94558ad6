"""attention_core.methods.weight_effect: each key's share of a head's weight and of what the head
moves, against plain loops over the trace's patterns and value norms, on both models."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import trace_sentence
from attention_core.methods.norm_weighted import norm_weighted_lhqk
from attention_core.methods.weight_effect import head_effect, largest_gap, shares_hk

SENTENCES = ("The river bank was muddy", "Jane visits Africa", "the cat saw the dog near the bank")


def _loop_shares(pattern_qk, norms_k):
    n = len(norms_k)
    weight = [sum(pattern_qk[q][k] for q in range(n)) for k in range(n)]
    moved = [weight[k] * norms_k[k] for k in range(n)]
    return [w / sum(weight) for w in weight], [m / sum(moved) for m in moved]


@pytest.mark.parametrize("text", SENTENCES)
def test_shares_equal_a_plain_loop_on_minilm(model, text):
    trace = trace_sentence(model, text)
    for layer in (0, 3, 5):
        weight_hk, moved_hk = shares_hk(trace.pattern_lhqk[layer], trace.value_norm_lhk[layer])
        for head in (0, 7, 11):
            pattern = trace.pattern_lhqk[layer, head].astype(float).tolist()
            norms = trace.value_norm_lhk[layer, head].astype(float).tolist()
            weight, moved = _loop_shares(pattern, norms)
            np.testing.assert_allclose(weight_hk[head], weight, rtol=1e-12)
            np.testing.assert_allclose(moved_hk[head], moved, rtol=1e-9)
        np.testing.assert_allclose(weight_hk.sum(1), 1.0, atol=1e-12)
        np.testing.assert_allclose(moved_hk.sum(1), 1.0, atol=1e-12)


def test_moved_share_is_the_norm_weighted_patterns_column_share(model):
    trace = trace_sentence(model, SENTENCES[0])
    weighted = norm_weighted_lhqk(trace).astype(np.float64)  # [l,h,q,k]
    columns = weighted.sum(2)
    expected = columns / columns.sum(-1, keepdims=True)
    for layer in range(trace.config.n_layers):
        _, moved_hk = shares_hk(trace.pattern_lhqk[layer], trace.value_norm_lhk[layer])
        np.testing.assert_allclose(moved_hk, expected[layer], rtol=1e-5)


def test_largest_gap_is_the_brute_force_maximum_on_both_models(model, smollm2):
    for m in (model, smollm2):
        trace = trace_sentence(m, SENTENCES[0])
        gaps = []
        for layer in range(trace.config.n_layers):
            w, v = shares_hk(trace.pattern_lhqk[layer], trace.value_norm_lhk[layer])
            gaps.append(w - v)
        gap_lhk = np.stack(gaps)
        best = largest_gap(trace)
        assert (best.layer, best.head, best.key) == np.unravel_index(
            gap_lhk.argmax(), gap_lhk.shape
        )
        assert best.weight_share - best.moved_share == pytest.approx(gap_lhk.max(), abs=1e-12)
        # the sink: the first token ([CLS] on MiniLM, "The" on SmolLM2) looked at, little moved
        assert best.key == 0 and best.weight_share > 0.6 and best.moved_share < 0.35


def test_head_effect_names_the_most_weighted_key(model):
    trace = trace_sentence(model, SENTENCES[0])
    effect = head_effect(trace, 1, 9)
    weight_hk, moved_hk = shares_hk(trace.pattern_lhqk[1], trace.value_norm_lhk[1])
    assert effect.key == int(np.argmax(weight_hk[9]))
    assert effect.weight_share == pytest.approx(weight_hk[9].max())
    assert effect.moved_share == pytest.approx(moved_hk[9, effect.key])


def test_shapes_must_match_and_zero_norms_move_nothing():
    with pytest.raises(ValueError, match="do not match"):
        shares_hk(np.ones((2, 3, 3)), np.ones((2, 4)))
    pattern = np.full((1, 2, 2), 0.5)
    weight, moved = shares_hk(pattern, np.zeros((1, 2)))
    np.testing.assert_array_equal(weight, [[0.5, 0.5]])
    np.testing.assert_array_equal(moved, [[0.0, 0.0]])
