"""The sentences of attention_core.lessons.head_words against the reference: every weight and
even spread against transformers' attentions (tests/core/oracles.py), every role and share against
TransformerLens's head detector on the same attentions under the stated rule
(tests/roles_reference.py, tests/role_claims.py), for every head of a few sentences on both text
models; and the words: no gloss, only measured relations."""

from __future__ import annotations

import re

import pytest

from attention_core import trace_sentence
from attention_core.lessons.head_words import (
    count_sentence,
    head_sentence,
    sink_sentence,
    token_name,
    weight_sentence,
)
from attention_core.methods.roles import name_heads, role_scores
from tests.core.oracles import oracle, reference
from tests.role_claims import check, claims
from tests.roles_named import passes, reference_name

TEXTS = (
    "The river bank was muddy",
    "the dog saw the dog and the cat saw the cat",
    "Wait... what?! (Yes, really)",
)
CASES = [(key, text) for key in ("minilm", "smollm2") for text in TEXTS]
WEIGHT = re.compile(r"(\d\.\d{3}) of its weight on")
EVEN = re.compile(r"an even spread over the (\d+) tokens it can see would give (\d\.\d{3})")


@pytest.mark.parametrize(("key", "text"), CASES)
def test_every_heads_role_sentence_is_the_references(engines, key, text):
    trace = trace_sentence(engines[key], text)
    scores = role_scores(trace)
    for layer in range(trace.config.n_layers):
        for head in range(trace.config.n_heads):
            said = head_sentence(scores, layer, head, trace.tokens.tokens)
            [(l_, h_, segment)] = claims(said)
            assert (l_, h_) == (layer, head)
            assert check(key, text, layer, head, segment) == [], said


@pytest.mark.parametrize(("key", "text"), CASES)
def test_a_weight_against_the_even_spread_over_the_keys_the_query_sees(engines, key, text):
    trace = trace_sentence(engines[key], text)
    ref = reference(key, text).pattern_lhqk
    n = len(oracle(key).ids(text))
    causal = key == "smollm2"
    for layer, head, query in ((0, 0, n - 1), (1, 2, n // 2), (2, 1, 1)):
        row = ref[layer, head, query]
        seen = query + 1 if causal else n
        keys = int(row[:seen].argmax())
        said = weight_sentence(trace, layer, head, query, keys)
        [weight] = WEIGHT.findall(said)
        assert abs(float(weight) - row[keys]) <= 5e-4 + 1e-6, said
        [(count, even)] = EVEN.findall(said)
        assert int(count) == seen and even == f"{1 / seen:.3f}", said
        assert said.startswith(f"Layer {layer}, head {head}: {token_name(trace.tokens, query)}")


@pytest.mark.parametrize(("key", "text"), CASES)
def test_the_counts_are_the_references(engines, key, text):
    trace = trace_sentence(engines[key], text)
    scores = role_scores(trace)
    n_layers, n_heads = trace.config.n_layers, trace.config.n_heads
    names = [reference_name(key, text, lay, h) for lay in range(n_layers) for h in range(n_heads)]
    said = count_sentence(scores)
    assert f"the {n_layers * n_heads} heads of its {n_layers} layers" in said
    counted = {m[1]: int(m[0]) for m in re.findall(r"(\d+) ([a-z\[\]-]+(?: sink)?)", said)}
    for role, label in (("previous_token", "previous-token"), ("broad", "broad")):
        assert counted.get(label, 0) == names.count(role), (said, role)
    assert counted.get("mixed", 0) == names.count("mixed"), said
    ours = [h.role for row in name_heads(scores) for h in row]
    assert sorted(ours) == sorted(names)  # every head named as the reference names it
    sinks = sink_sentence(scores, trace.tokens.tokens)
    [(count, total)] = re.findall(r"by the rule, (\d+) of the (\d+) heads", sinks)
    closing = ("first_token", "last_token") if key == "minilm" else ("first_token",)
    sunk = sum(
        any(passes(key, text, role, lay, h) for role in closing)
        for lay in range(n_layers)
        for h in range(n_heads)
    )
    assert (int(count), int(total)) == (sunk, n_layers * n_heads), sinks


def test_position_words_and_pieces():
    """Only measured relations: the token just before, an earlier copy of the same token; a
    piece names its word; a byte-level space mark is not shown."""
    from attention_core import load_model

    minilm = load_model("minilm")
    trace = trace_sentence(minilm, "the dog saw the dog verdant")
    tokens = trace.tokens.tokens
    dog, second = tokens.index("dog"), len(tokens) - 1 - tokens[::-1].index("dog")
    said = weight_sentence(trace, 0, 0, second, dog)
    assert "(an earlier copy of the same token)" in said
    assert "(the token just before it)" in weight_sentence(trace, 0, 0, dog, dog - 1)
    piece = tokens.index("##t")
    assert token_name(trace.tokens, piece) == "“##t” (part of “verdant”)"
    smol = trace_sentence(load_model("smollm2"), "The river bank")
    assert token_name(smol.tokens, 1) == "“river”"
    for gloss in ("refers", "describe", "says which", "the word that"):
        assert gloss not in said.lower()
