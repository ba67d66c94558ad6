"""The most telling head: its choice on the notes' sentences (measured on the real model), and its
rule checked against a plain-loop reference on random sentences, one-word sentences and hidden
tokens.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from attention_core import WhatIf, telling_head, trace_sentence
from attention_core.methods.geometry import split_words
from attention_core.methods.telling import FUNCTION_WORDS, NEIGHBOUR_SHARE

# Words with pieces (verdant, wazowski), function words and punctuation.
VOCABULARY = ("river", "bank", "verdant", "wazowski", "the", "was", "of", "blue", "!", ",", "-")


def _reference(trace):
    """The rule of attention_core.methods.telling, as plain loops: (layer, head, query, key,
    content)."""
    tokens = trace.tokens.tokens
    word_of = {p: i for i, (_, pos) in enumerate(split_words(tokens)) for p in pos}
    words = dict(enumerate(w for w, _ in split_words(tokens)))
    visible = [p for p in word_of if p not in trace.whatif.hidden]
    content = [
        p
        for p in visible
        if any(c.isalnum() for c in words[word_of[p]]) and words[word_of[p]] not in FUNCTION_WORDS
    ]
    n, pattern = len(tokens), trace.pattern_lhqk
    skip = set()
    if n - 2 >= 2:
        for layer, head in np.ndindex(pattern.shape[:2]):
            rows = pattern[layer, head]
            if min(rows[q, q - 1] for q in range(1, n - 1)) >= NEIGHBOUR_SHARE or (
                min(rows[q, q + 1] for q in range(1, n - 1)) >= NEIGHBOUR_SHARE
            ):
                skip.add((layer, head))
    for pieces, is_content in ((content, True), (visible, False)):
        best, pick = -1.0, None
        for layer, head in np.ndindex(pattern.shape[:2]):
            for q in pieces:
                for k in pieces:
                    ok = (layer, head) not in skip and word_of[q] != word_of[k]
                    if ok and pattern[layer, head, q, k] > best:
                        best, pick = pattern[layer, head, q, k], (layer, head, q, k, is_content)
        if pick is not None:
            return pick, skip
    return None, skip


def _check(trace):
    found = telling_head(trace)
    expected, skip = _reference(trace)
    if expected is None:
        assert found is None
        return
    assert (found.layer, found.head, found.query, found.key) == expected[:4]
    assert found.between_content_words == expected[4]
    assert set(found.skipped_heads) == skip
    assert found.weight == trace.pattern_lhqk[found.layer, found.head, found.query, found.key]
    special = trace.tokens.special_t
    assert not special[found.key] and not special[found.query] and found.key != found.query


def test_river_bank_bank_reads_river_in_layer_1_head_9(model):
    found = telling_head(trace_sentence(model, "The river bank was muddy"))
    assert (found.layer, found.head, found.query, found.key) == (1, 9, 3, 2)
    assert found.weight == pytest.approx(0.750, abs=0.005)
    assert found.between_content_words and found.skipped_heads == ((0, 2),)


def test_dirty_quantum_plumbing_picks_a_stronger_head_than_the_notes_example(model):
    """The notes' layer 0, head 3 gives "plumbing" 0.40 to "quantum" and 0.14 to "dirty"; layer 0,
    head 0 gives 0.82 to "quantum", and the rule picks that."""
    trace = trace_sentence(model, "dirty quantum plumbing")  # [CLS] dirty quantum plumbing [SEP]
    np.testing.assert_allclose(trace.pattern_lhqk[0, 3, 3, [2, 1]], [0.40, 0.14], atol=0.005)
    found = telling_head(trace)
    assert (found.layer, found.head, found.query, found.key) == (0, 0, 3, 2)
    assert found.weight == pytest.approx(0.816, abs=0.005)


def test_layer_0_head_2_reads_the_previous_piece_and_is_left_out(model):
    trace = trace_sentence(model, "the fluffy blue creature roamed the verdant forest")
    inner = np.arange(1, trace.n_tokens - 1)
    assert trace.pattern_lhqk[0, 2, inner, inner - 1].min() > 0.99
    found = telling_head(trace)
    assert found.skipped_heads == ((0, 2),)
    # "##t", the last piece of "verdant", reads "forest": not "##rdan" or "ve", its own word
    tokens = trace.tokens.tokens
    assert (found.layer, found.head) == (1, 8)
    assert (tokens[found.query], tokens[found.key]) == ("##t", "forest")
    assert found.weight == pytest.approx(0.871, abs=0.005)


@pytest.mark.parametrize(
    "text",
    [
        "I made a deposit at the bank",
        "Jane visits Africa",
        "The green one-eyed creature from the Pixar movie is short and not very menacing.",
        "Wait... what?! (Yes, really)",
        "東京は日本の首都です。",
    ],
)
def test_the_rule_equals_the_plain_loop_reference(model, text):
    _check(trace_sentence(model, text))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(words=hs.lists(hs.sampled_from(VOCABULARY), min_size=1, max_size=7))
def test_random_sentences_follow_the_rule(model, words):
    _check(trace_sentence(model, " ".join(words)))


@pytest.mark.parametrize("text", ["hello", "plumbing", "muddy", "Wazowski", "!"])
def test_one_word_has_no_telling_head(model, text):
    """Nothing else to read: another piece of the same word does not count (mud -> ##dy)."""
    trace = trace_sentence(model, text)
    assert telling_head(trace) is None
    _check(trace)


@pytest.mark.parametrize("text", ["Hello!", "the cat", "of the"])
def test_without_two_content_words_the_fallback_reads_any_other_piece(model, text):
    trace = trace_sentence(model, text)
    found = telling_head(trace)
    assert found is not None and not found.between_content_words
    _check(trace)


def test_hidden_tokens_are_never_picked(model):
    trace = trace_sentence(model, "The river bank was muddy", WhatIf(hidden=(2,)))
    found = telling_head(trace)
    assert 2 not in (found.query, found.key)
    _check(trace)


@pytest.mark.parametrize(
    "text", ["dirty quantum plumbing", "The river bank was muddy", "I made a deposit at the bank"]
)
def test_on_the_decoder_the_first_token_is_never_the_telling_key(smollm2, text):
    # Rule 5: most decoder heads park their weight on the first token (the attention sink); the
    # pick must be a real word reading an earlier word, with the weight the pattern holds.
    trace = trace_sentence(smollm2, text)
    pick = telling_head(trace)
    assert pick is not None and pick.key != 0 and pick.key < pick.query
    assert pick.weight == float(trace.pattern_lhqk[pick.layer, pick.head, pick.query, pick.key])
    sink = max(float(trace.pattern_lhqk[layer][:, 1:, 0].max()) for layer in range(30))
    assert sink > pick.weight  # the sink would have won without the rule
