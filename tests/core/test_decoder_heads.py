"""The decoder pages' head rules and measures (attention_core.methods.decoder_heads) against plain
loops over synthetic patterns, and on the real SmolLM2 where the rule depends on the model."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.core.words import word_pattern
from attention_core.methods.decoder_heads import (
    NOTE_PHRASE,
    NOTE_TABLE_QK,
    first_token_share,
    group_similarity,
    note_tables,
    pick_head,
)


def pool_words(p: np.ndarray, spans: list[tuple[int, ...]]) -> np.ndarray:
    """The engine's one word pooling (words.word_pattern), spans given as positions only."""
    return word_pattern(p, [(str(i), list(span)) for i, span in enumerate(spans)])


RNG = np.random.default_rng(3)


def _causal_rows(shape: tuple[int, ...]) -> np.ndarray:
    """Random softmax-like rows with the upper triangle exactly 0."""
    p = RNG.random(shape) * np.tril(np.ones(shape[-2:]))
    return p / p.sum(-1, keepdims=True)


def test_the_note_is_a_causal_table():
    np.testing.assert_allclose(NOTE_TABLE_QK.sum(1), 1.0)
    assert (NOTE_TABLE_QK[np.triu_indices(3, 1)] == 0).all()


def test_rules_pick_what_a_loop_picks():
    tables = _causal_rows((4, 5, 3, 3))
    best, where = np.inf, None
    for layer in range(4):
        for head in range(5):
            d = sum(
                abs(tables[layer, head, i, j] - NOTE_TABLE_QK[i, j])
                for i in range(3)
                for j in range(3)
            )
            if d < best:
                best, where = d, (layer, head)
    pick = pick_head(tables, "closest")
    assert (pick.layer, pick.head) == where and pick.value == pytest.approx(best)
    tables[2, 3, 2] = [0.0, 0.99, 0.01]  # plumbing -> quantum
    pick = pick_head(tables, "adjective")
    assert (pick.layer, pick.head, pick.value) == (2, 3, pytest.approx(0.99))
    tables[1, 1] = NOTE_TABLE_QK
    assert (pick_head(tables, "closest").layer, pick_head(tables, "closest").head) == (1, 1)
    with pytest.raises(ValueError, match="unknown rule"):
        pick_head(tables, "loudest")


def test_group_similarity_against_a_loop():
    p = _causal_rows((6, 5, 5))
    p[1] = p[0]  # heads 0 and 1 identical
    sim = group_similarity(p, 2)  # groups {0,1,2}, {3,4,5}
    for a in range(6):
        for b in range(6):
            want = np.mean([np.minimum(p[a, q], p[b, q]).sum() for q in range(5)])
            assert sim.overlap_hh[a, b] == pytest.approx(want)
    assert sim.overlap_hh[0, 1] == pytest.approx(1.0)
    within = [
        sim.overlap_hh[a, b] for a in range(6) for b in range(6) if a != b and a // 3 == b // 3
    ]
    across = [sim.overlap_hh[a, b] for a in range(6) for b in range(6) if a // 3 != b // 3]
    assert sim.within == pytest.approx(np.mean(within))
    assert sim.across == pytest.approx(np.mean(across))
    assert sim.group_size == 3
    with pytest.raises(ValueError, match="cannot share 4"):
        group_similarity(p, 4)


def test_first_token_share():
    p = _causal_rows((3, 4, 4))
    np.testing.assert_array_equal(first_token_share(p, 2), p[:, 2, 0])


def test_pool_words_against_a_loop():
    p = _causal_rows((5, 5))
    spans = [(0, 1), (2,), (3, 4)]
    table = pool_words(p, spans)
    for a, qs in enumerate(spans):
        for b, ks in enumerate(spans):
            assert table[a, b] == pytest.approx(np.mean([sum(p[q, k] for k in ks) for q in qs]))
    np.testing.assert_allclose(table.sum(1), 1.0)


def test_note_tables_on_the_real_decoder(smollm2):
    from attention_core import trace_sentence

    trace = trace_sentence(smollm2, NOTE_PHRASE)
    tables = note_tables(trace)
    cfg = smollm2.config
    assert tables.shape == (cfg.n_layers, cfg.n_heads, 3, 3)
    np.testing.assert_allclose(tables.sum(-1), 1.0, atol=1e-5)
    assert (tables[..., np.triu(np.ones((3, 3), bool), 1)] == 0).all()  # the causal mask
    layer, head = 7, 5
    spans = [(0, 1), (2,), (3,)]  # "dir" + "ty", "▁quantum", "▁plumbing"
    assert trace.tokens.tokens[2:] == ("▁quantum", "▁plumbing")
    np.testing.assert_allclose(
        tables[layer, head], pool_words(trace.pattern_lhqk[layer, head], spans)
    )
    with pytest.raises(ValueError, match="not"):
        note_tables(trace_sentence(smollm2, "clean quantum plumbing"))
