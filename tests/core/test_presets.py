"""The curated presets against the engine: each claim's number is the pattern weight it names, as
printed; no probe is a word of its sentence; the bank probes show the two senses of "bank".
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attention_core import cosine, embed_words, tokenize, trace_sentence
from attention_core.methods.geometry import split_words
from ui.presets import (
    BANK_PROBES,
    CURATED,
    DEFAULT_PROBES,
    DEFAULT_SENTENCE,
    PRESETS,
    curated,
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
    assert preset.token != preset.key and len(preset.claim.split(". ")) == 1


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
