"""The curated presets: each view's head is the one its stated rule picks on transformers'
attentions; no probe is a word of its sentence; the bank probes show the two senses of "bank".
(What each view says is checked in tests/app/test_presets_claims.py.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attention_core import cosine, embed_words, tokenize, trace_sentence
from attention_core.methods.geometry import split_words
from attention_core.methods.telling import FUNCTION_WORDS, NEIGHBOUR_SHARE
from ui.presets import (
    BANK_PROBES,
    CURATED,
    DEFAULT_PROBES,
    DEFAULT_SENTENCE,
    PRESETS,
    RULES,
    curated,
    picked_by,
    probes_for,
)

ROOT = Path(__file__).resolve().parents[2]
IDS = [preset.sentence[:24] for preset in CURATED]


@pytest.mark.parametrize("preset", CURATED, ids=IDS)
def test_no_probe_is_a_word_of_its_sentence(model, preset):
    words = {word for word, _ in split_words(tokenize(model, preset.sentence).tokens)}
    for probe in preset.probes:
        probe_words = {word for word, _ in split_words(tokenize(model, probe).tokens)}
        assert not probe_words & words, (probe, preset.sentence)


@pytest.mark.parametrize("preset", CURATED, ids=IDS)
def test_the_followed_token_and_its_key_are_words(model, preset):
    tokens = tokenize(model, preset.sentence)
    for position in (preset.token, preset.key):
        assert 0 < position < len(tokens) - 1 and not tokens.special_t[position]
    assert preset.token != preset.key and preset.rule in RULES


def test_the_bank_probes_tell_the_two_banks_apart(model):
    """After every block, "bank" by the river is closer to shore and stream, and farther from
    money and finance, than "bank" after a deposit (measured: 0.07-0.14 closer to shore, 0.02-0.08
    farther from money)."""
    probes_lpd = embed_words(model, BANK_PROBES)
    river, deposit = (curated(s) for s in (DEFAULT_SENTENCE, "I made a deposit at the bank"))
    by_river, by_deposit = (
        cosine(trace_sentence(model, p.sentence).hidden_ltd[:, p.token, None], probes_lpd)
        for p in (river, deposit)
    )  # [l,1,d] vs [l,p,d] -> [l,p]
    closer = (by_river - by_deposit)[1:]
    assert (closer[:, :2] > 0).all() and (closer[:, 2:] < 0).all(), closer
    assert (closer[:, :2].mean(axis=1) - closer[:, 2:].mean(axis=1) > 0.05).all(), closer


def test_presets_keep_the_interface_the_pages_use():
    assert list(PRESETS) == [preset.sentence for preset in CURATED] and len(PRESETS) == 6
    assert next(iter(PRESETS)) == DEFAULT_SENTENCE
    assert probes_for(DEFAULT_SENTENCE) == BANK_PROBES
    assert probes_for("something typed") == DEFAULT_PROBES
    assert curated("something typed") is None
    assert "Wazowski" not in list(PRESETS)[-1] and "monster" in list(PRESETS)[-1]


def test_presets_import_no_streamlit():
    code = "import sys, ui.presets; print('streamlit' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"


def test_the_curated_heads_are_real_heads(model):
    cfg = model.config
    for preset in CURATED:
        assert 0 <= preset.layer < cfg.n_layers and 0 <= preset.head < cfg.n_heads
    assert np.unique([p.sentence for p in CURATED]).size == len(CURATED)


def _word_rule(pattern_lhqk: np.ndarray, tokens: list[str], query: int) -> tuple[int, int, int]:
    """The "word" rule as plain loops: the head and key where ``query`` puts the most weight on
    a piece of another content word, heads that give every inner piece at least half of its
    weight on the piece before (or after) it left out."""
    words = split_words(tokens)
    word_of = {p: i for i, (_, pieces) in enumerate(words) for p in pieces}
    content = {
        p
        for p, i in word_of.items()
        if any(c.isalnum() for c in words[i][0]) and words[i][0] not in FUNCTION_WORDS
    }
    n_layers, n_heads, n, _ = pattern_lhqk.shape
    best, pick = -1.0, None
    for layer in range(n_layers):
        for head in range(n_heads):
            rows = pattern_lhqk[layer, head]
            inner = range(1, n - 1)
            if min(rows[q, q - 1] for q in inner) >= NEIGHBOUR_SHARE:
                continue
            if min(rows[q, q + 1] for q in inner) >= NEIGHBOUR_SHARE:
                continue
            for key in content:
                if word_of[key] != word_of[query] and rows[query, key] > best:
                    best, pick = float(rows[query, key]), (layer, head, key)
    assert pick is not None
    return pick


@pytest.mark.parametrize("preset", CURATED, ids=IDS)
def test_each_view_is_what_its_rule_picks_on_transformers_attentions(preset):
    from tests.core.oracles import oracle, reference

    ora = oracle("minilm")
    pattern = reference("minilm", preset.sentence).pattern_lhqk
    tokens = ora.tokenizer.convert_ids_to_tokens(ora.ids(preset.sentence))
    if preset.rule == "word":
        assert _word_rule(pattern, tokens, preset.token) == (preset.layer, preset.head, preset.key)
        assert f"“{tokens[preset.token]}” puts the most weight" in picked_by(preset, tokens)
    else:
        smaller_lh = pattern[:, :, preset.token][..., list(preset.keys)].min(-1)
        layer, head = np.unravel_index(np.argmax(smaller_lh), smaller_lh.shape)
        assert (layer, head) == (preset.layer, preset.head)
        assert "smaller weight" in picked_by(preset, tokens)
