"""Every preset's claim, number by number, against the engine: each "W on “token”" is the weight
the followed token gives that token on the preset's head, a "together" is their sum, and no
number in a claim goes unchecked. Also: a typed sentence never gets one of its own words as a
probe, and the probe box's defaults follow the sentence until the visitor edits them."""

from __future__ import annotations

import re

import pytest

from attention_core import trace_sentence
from ui.presets import (
    CURATED,
    DEFAULT_PROBES,
    MONEY_BANK,
    RIVER_BANK,
    auto_probes,
    probes_for,
)

IDS = [preset.sentence[:24] for preset in CURATED]
PAIR = re.compile(r"(\d\.\d\d\d)(?: of its attention)? on “([^”]+)”")
TOGETHER = re.compile(r"(\d\.\d\d\d) together")


@pytest.mark.parametrize("preset", CURATED, ids=IDS)
def test_every_number_of_a_claim_is_the_engines_weight(model, preset):
    trace = trace_sentence(model, preset.sentence)
    tokens = trace.tokens.tokens
    row = trace.pattern_lhqk[preset.layer, preset.head, preset.token]
    named = (preset.key, *preset.also)
    assert preset.claim.startswith(
        f"Layer {preset.layer}, head {preset.head}: “{tokens[preset.token]}” puts "
    )
    pairs = PAIR.findall(preset.claim)
    assert [word for _, word in pairs] == [tokens[k] for k in named], preset.claim
    for (shown, _), k in zip(pairs, named, strict=True):
        assert shown == f"{row[k]:.3f}", (preset.claim, k, float(row[k]))
    checked = [shown for shown, _ in pairs]
    for shown in TOGETHER.findall(preset.claim):
        assert shown == f"{row[list(named)].sum():.3f}", (
            preset.claim,
            float(row[list(named)].sum()),
        )
        checked.append(shown)
    assert sorted(re.findall(r"\d\.\d+", preset.claim)) == sorted(checked), preset.claim


@pytest.mark.parametrize("preset", CURATED, ids=IDS)
def test_the_named_words_are_what_the_head_reads_most_among_words(model, preset):
    """The claim names the keys this head weighs most among the sentence's words (other than
    the token itself): a claim never picks a minor weight and calls it the point."""
    trace = trace_sentence(model, preset.sentence)
    row = trace.pattern_lhqk[preset.layer, preset.head, preset.token].copy()
    row[trace.tokens.special_t] = -1
    row[preset.token] = -1
    named = (preset.key, *preset.also)
    top = set(row.argsort()[::-1][: len(named)].tolist())
    assert top == set(named), (preset.sentence, row.round(3))


def test_the_adjective_claims_name_both_adjectives(model):
    """The notes' examples are about every adjective updating its noun: the claims name each
    adjective with its own weight (a head that reads only one of them would show 0.00 on the
    other: L0H1 gave "blue" 0.00, L0H0 gave "dirty" 0.03)."""
    for sentence, noun, adjectives in (
        ("dirty quantum plumbing", "plumbing", ("quantum", "dirty")),
        ("the fluffy blue creature roamed the verdant forest", "creature", ("fluffy", "blue")),
    ):
        [preset] = [p for p in CURATED if p.sentence == sentence]
        trace = trace_sentence(model, sentence)
        tokens = trace.tokens.tokens
        assert tokens[preset.token] == noun
        assert tuple(tokens[k] for k in (preset.key, *preset.also)) == adjectives
        row = trace.pattern_lhqk[preset.layer, preset.head, preset.token]
        assert min(row[k] for k in (preset.key, *preset.also)) > 0.1, row.round(3)
        assert "adjective head" not in preset.claim


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
