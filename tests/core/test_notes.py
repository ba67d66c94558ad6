"""attention_core.lessons.notes against the trace's own numbers, on both packaged text models: each
rule picks what it says, the soft SELECT equals the forward pass's pattern row and head output, and
the measured claims the Notes page prints hold."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import embed_words, trace_sentence
from attention_core.lessons.notes import (
    ADJECTIVES,
    FLUFFY,
    JANE,
    JANE_NOTE,
    LOOK_BACK,
    MONSTER_ALONE,
    MONSTER_CONTEXT,
    MONSTER_PROBES,
    adjectives,
    closest_head,
    context_window,
    jane,
    length_effect,
    monster_shift,
    pair_weights,
    soft_select,
    strongest_head,
    word_tables,
)
from attention_core.methods.decoder_heads import NOTE_PHRASE, note_tables
from attention_core.methods.geometry import split_words

MODELS = ("minilm", "smollm2")


@pytest.fixture(scope="module", params=MODELS)
def engine(request, engines):
    return engines[request.param]


def test_word_tables_are_the_decoder_pages_tables_on_the_plumbing_phrase(smollm2):
    trace = trace_sentence(smollm2, NOTE_PHRASE)
    words, tables = word_tables(trace)
    assert words == ("dirty", "quantum", "plumbing")
    np.testing.assert_array_equal(tables, note_tables(trace))
    np.testing.assert_allclose(tables.sum(-1), 1.0, atol=1e-5)  # each query's row sums to 1


def test_strongest_head_has_the_largest_smallest_weight(engine):
    trace = trace_sentence(engine, FLUFFY)
    words, tables = word_tables(trace)
    pick = strongest_head(words, tables, ADJECTIVES)
    cfg = trace.config
    for layer in range(cfg.n_layers):  # a plain loop over the heads, reading the tables directly
        for head in range(cfg.n_heads):
            weakest = min(
                tables[layer, head, words.index(q), words.index(k)] for q, k in ADJECTIVES
            )
            assert weakest <= min(pick.weights) + 1e-12
    assert pick.weights == tuple(
        tables[pick.layer, pick.head, words.index(q), words.index(k)] for q, k in ADJECTIVES
    )


def test_adjectives_yardsticks(engine):
    trace = trace_sentence(engine, FLUFFY)
    a = adjectives(trace)
    words = a.words
    verb, noun = (words.index(w) for w in LOOK_BACK)
    assert a.look_back == a.best.table_ww[verb, noun]
    if trace.config.causal:  # a decoder's query sees itself and the words before it
        assert a.even == tuple(1 / (words.index(q) + 1) for q, _ in ADJECTIVES)
        assert (np.triu(a.best.table_ww, 1) == 0).all()
    else:  # [CLS] and [SEP] are words of their own
        assert a.even == (1 / len(words),) * 3 and words[0] == "[CLS]"
    # the look-one-word-back head: strongest on the two adjectives right before their nouns
    assert a.next_to.pairs == ADJECTIVES[1:]
    assert min(a.next_to.weights) >= min(a.best.weights[1:])


def test_soft_select_is_the_forward_pass(engine):
    trace = trace_sentence(engine, JANE)
    for layer, head, query in ((0, 0, 1), (trace.config.n_layers - 1, 2, 2)):
        s = soft_select(trace, layer, head, query)
        n_seen = query + 1 if trace.config.causal else trace.n_tokens
        assert len(s.keys) == n_seen
        np.testing.assert_allclose(
            s.weight_k, trace.pattern_lhqk[layer, head][query, :n_seen], atol=1e-6
        )
        np.testing.assert_allclose(s.z_e, trace.z_lhqe[layer, head][query], atol=1e-5)
        np.testing.assert_allclose(
            s.dot_k, trace.scores_lhqk[layer, head][query, :n_seen], rtol=1e-5, atol=1e-4
        )
        q, k = s.q_e, s.k_ke
        cos = [float(q @ kk) / (np.linalg.norm(q) * np.linalg.norm(kk)) for kk in k]
        np.testing.assert_allclose(s.cos_k, cos)
        np.testing.assert_allclose(s.dot_k, s.cos_k * s.q_norm * s.k_norm_k)
    with pytest.raises(ValueError, match="outside"):
        soft_select(trace, 0, 0, trace.n_tokens)


def test_jane_follows_the_closest_rule_and_the_mask(engine):
    trace = trace_sentence(engine, JANE)
    j = jane(trace)
    words, tables = word_tables(trace)
    pairs = tuple((q, k) for q, k, _ in JANE_NOTE)
    distance = np.abs(pair_weights(words, tables, pairs) - [n for _, _, n in JANE_NOTE]).sum(-1)
    assert distance[j.best.layer, j.best.head] == distance.min()
    again = closest_head(words, tables, JANE_NOTE)
    assert (again.layer, again.head, again.weights) == (j.best.layer, j.best.head, j.best.weights)
    assert j.pair == int(np.argmax(j.best.weights))
    query_word = JANE_NOTE[j.pair][0]
    assert j.select.keys[j.select.query].removeprefix("▁").lower() == query_word
    if trace.config.causal:  # "jane" and "visits" cannot see a later word in a decoder
        assert j.best.weights[:2] == (0.0, 0.0) and j.pair == 2
    else:
        assert j.pair == 0 and j.best.weights[0] > 0.5


def test_length_effect_multiplies_the_dot_product_and_keeps_the_cosine():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=32), rng.normal(size=32)
    e = length_effect(q, k, 3.0)
    assert e.dot == pytest.approx(q @ k) and e.dot_longer == pytest.approx(3 * (q @ k))
    assert e.cos == pytest.approx(e.cos_longer)
    assert e.cos == pytest.approx(q @ k / np.linalg.norm(q) / np.linalg.norm(k))


def test_monster_shift_reads_the_last_monster_at_the_last_layer(engine):
    with_trace, without_trace = (
        trace_sentence(engine, t) for t in (MONSTER_CONTEXT, MONSTER_ALONE)
    )
    probes_lpd = embed_words(engine, list(MONSTER_PROBES))
    m = monster_shift(with_trace, without_trace, MONSTER_PROBES, probes_lpd)

    def monster(trace):
        spans = [pos for w, pos in split_words(trace.tokens.tokens) if w.lower() == "monster"]
        return trace.hidden_ltd[-1][list(spans[-1])].mean(0).astype(np.float64)

    for vector, cos in ((monster(with_trace), m.with_p), (monster(without_trace), m.without_p)):
        expected = probes_lpd[-1] @ vector / np.linalg.norm(probes_lpd[-1], axis=1)
        np.testing.assert_allclose(cos, expected / np.linalg.norm(vector), rtol=1e-6)
    np.testing.assert_allclose(m.change_p, m.with_p - m.without_p)
    assert 0 < m.moved < 1  # the passage moves it, and not to the opposite side
    with pytest.raises(ValueError, match="not a word"):
        monster_shift(with_trace, trace_sentence(engine, JANE), MONSTER_PROBES, probes_lpd)


def test_context_window(engines):
    minilm, smollm2 = engines["minilm"].config, engines["smollm2"].config
    w = context_window(minilm, 45)
    assert (w.weights, w.longest, w.weights_longest, w.heads) == (2025, 512, 512**2, 72)
    w = context_window(smollm2, 10)
    assert (w.longest, w.runs, w.heads) == (8192, smollm2.max_tokens, 270)
    assert context_window(smollm2, 20).weights == 4 * w.weights  # twice the tokens
