"""Every preset's sentence, number by number, against the reference: transformers' attentions
(BertModel on the packaged MiniLM, ``tests.core.oracles.reference``) for each "W of its weight
on “token”" and the even spread over the tokens the query can see, and TransformerLens's head
detector on the same attentions (``tests.roles_reference``) for the head's role by the stated
rule. The sentences are the ones the pages show, built at run time by
``attention_core.lessons.head_words`` from the engine's numbers; no number in them goes
unchecked, and no hand-written gloss ("the word that says which kind", "refers back") is left.
Also: a typed sentence never gets one of its own words as a probe, and the probe box's defaults
follow the sentence until the visitor edits them."""

from __future__ import annotations

import re

import numpy as np
import pytest

from attention_core import trace_sentence
from attention_core.lessons.head_words import shown, view_sentence
from attention_core.methods.roles import RULE, role_scores
from tests.core.oracles import oracle, reference
from tests.role_claims import check, claims
from tests.roles_reference import reference_even, reference_scores
from ui.presets import (
    CURATED,
    DEFAULT_PROBES,
    MONEY_BANK,
    RIVER_BANK,
    auto_probes,
    probes_for,
)

IDS = [preset.sentence[:24] for preset in CURATED]
PAIR = re.compile(r"(\d\.\d\d\d)(?: of its weight)? on “([^”]+)”")
EVEN = re.compile(r"an even spread over the (\d+) tokens it can see would give (\d\.\d\d\d)")
GLOSSES = ("the word that", "refers", "describe", "says which", "what jane does", "makes it")


def said(model, preset) -> str:
    """The sentence Start here shows for ``preset``'s view."""
    trace = trace_sentence(model, preset.sentence)
    return view_sentence(
        trace, role_scores(trace), preset.layer, preset.head, preset.token, preset.keys
    )


@pytest.mark.parametrize("preset", CURATED, ids=IDS)
def test_every_weight_of_a_view_is_transformers(model, preset):
    text = said(model, preset)
    ref = reference("minilm", preset.sentence).pattern_lhqk
    tokens = oracle("minilm").tokenizer.convert_ids_to_tokens(oracle("minilm").ids(preset.sentence))
    row = ref[preset.layer, preset.head, preset.token]
    assert text.startswith(
        f"Layer {preset.layer}, head {preset.head}: “{shown(tokens[preset.token])}” puts "
    ), text
    pairs = PAIR.findall(text)
    assert [word for _, word in pairs] == [tokens[k] for k in preset.keys], text
    for (weight, _), k in zip(pairs, preset.keys, strict=True):
        assert abs(float(weight) - row[k]) <= 5e-4 + 1e-6, (text, k, float(row[k]))
    [(n, even)] = EVEN.findall(text)
    assert int(n) == len(tokens) and even == f"{1 / len(tokens):.3f}", text  # an encoder sees all
    numbers = re.findall(r"\d\.\d+", text)
    assert sorted(numbers) == sorted([w for w, _ in pairs] + [even]), text  # none unchecked


@pytest.mark.parametrize("preset", CURATED, ids=IDS)
def test_the_role_a_view_names_is_the_references(model, preset):
    text = said(model, preset)
    found = claims(text)
    assert [(layer, head) for layer, head, _ in found] == [(preset.layer, preset.head)]
    [(layer, head, segment)] = found
    assert "by the rule" in segment and "%" in segment
    assert check("minilm", preset.sentence, layer, head, segment) == []
    assert not any(gloss in text.lower() for gloss in GLOSSES), text


def test_the_river_bank_head_is_said_to_park_on_cls(model):
    """The teacher's review: layer 1, head 9 gives [CLS] 0.71 of its weight over the sentence and
    otherwise the previous token; the view says both, beside "river"."""
    [preset] = [p for p in CURATED if p.sentence == RIVER_BANK]
    text = said(model, preset)
    ref = reference("minilm", RIVER_BANK).pattern_lhqk[1, 9]
    cls = float(ref[:, 0].mean())
    assert cls > 0.5
    assert f"first-token sink, {cls:.0%} of its weight on the first token, “[CLS]”" in text
    assert "“river” (the token just before it)" in text
    # its previous-token share is named only if the rule passes on the reference scores
    prev = float(reference_scores("minilm", RIVER_BANK)["previous_token"][1, 9])
    even = reference_even("minilm", RIVER_BANK)["previous_token"]
    assert ("previous-token head" in text) == (prev >= even + RULE.margin)


@pytest.mark.parametrize("preset", CURATED, ids=IDS)
def test_the_named_words_are_what_the_head_reads_most_among_words(preset):
    """The view names the keys this head weighs most among the sentence's words (other than
    the token itself), on transformers' attentions: a view never picks a minor weight."""
    ref = reference("minilm", preset.sentence).pattern_lhqk
    ids = oracle("minilm").ids(preset.sentence)
    special = np.isin(ids, oracle("minilm").tokenizer.all_special_ids)
    row = ref[preset.layer, preset.head, preset.token].copy()
    row[special] = -1
    row[preset.token] = -1
    top = set(row.argsort()[::-1][: len(preset.keys)].tolist())
    assert top == set(preset.keys), (preset.sentence, row.round(3))


def test_the_adjective_views_name_both_adjectives(model):
    """The notes' examples are about every adjective of a noun: the views name each adjective
    with its own weight (a head that gives one of them nothing would show 0.00: L0H1 gave
    "blue" 0.00, L0H0 gave "dirty" 0.03)."""
    for sentence, noun, adjectives in (
        ("dirty quantum plumbing", "plumbing", ("quantum", "dirty")),
        ("the fluffy blue creature roamed the verdant forest", "creature", ("fluffy", "blue")),
    ):
        [preset] = [p for p in CURATED if p.sentence == sentence]
        ref = reference("minilm", sentence).pattern_lhqk
        tokens = oracle("minilm").tokenizer.convert_ids_to_tokens(oracle("minilm").ids(sentence))
        assert tokens[preset.token] == noun
        assert tuple(tokens[k] for k in preset.keys) == adjectives
        row = ref[preset.layer, preset.head, preset.token]
        assert min(row[k] for k in preset.keys) > 0.1, row.round(3)
        assert "adjective head" not in said(model, preset)


@pytest.mark.parametrize(
    ("typed", "left_out"),
    [
        ("I walked along the river", {"river"}),
        ("Money, money, money", {"money"}),
        ("The River and the WATER", {"river", "water"}),
        ("the cat sat on the mat", set()),
    ],
)
def test_a_typed_sentence_never_gets_its_own_words_as_probes(typed, left_out):
    probes = probes_for(typed)
    assert set(probes) == set(DEFAULT_PROBES) - left_out
    assert list(probes) == [p for p in DEFAULT_PROBES if p not in left_out]  # order kept


def test_probe_defaults_follow_the_sentence_until_edited():
    river = ", ".join(probes_for(RIVER_BANK))
    money = ", ".join(probes_for(MONEY_BANK))
    assert auto_probes(", ".join(DEFAULT_PROBES), None, RIVER_BANK) == river  # first visit
    # A page's widget state comes back as the URL default after a visit to another page:
    assert auto_probes(", ".join(DEFAULT_PROBES), RIVER_BANK, RIVER_BANK) == river
    assert auto_probes(river, RIVER_BANK, MONEY_BANK) == money  # a new sentence, unedited
    assert auto_probes("tea, coffee", RIVER_BANK, MONEY_BANK) == "tea, coffee"  # edited: kept
    assert auto_probes("", RIVER_BANK, RIVER_BANK) == ""  # emptied on purpose: kept
    assert "river" not in auto_probes(", ".join(DEFAULT_PROBES), None, "a river walk")
