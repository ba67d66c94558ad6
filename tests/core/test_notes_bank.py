"""The notes' "bank" probes (attention_core.lessons.notes_bank) and the sizes behind the notes'
slips (attention_core.lessons.notes_slips) against the libraries that run each model:
transformers' BertModel on MiniLM and LlamaForCausalLM on SmolLM2's GGUF file. The cosines are
recomputed from the reference models' own hidden states."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from attention_core import embed_words, trace_sentence
from attention_core.lessons.notes_bank import (
    BANK_MONEY,
    BANK_PROBES,
    BANK_RIVER,
    RIVER_SIDE,
    bank_probes,
    bank_vector,
)
from attention_core.lessons.notes_slips import PIECES_WORD, model_sizes
from attention_core.methods.geometry import split_words
from tests.core.oracles import oracle, reference

MODELS = ("minilm", "smollm2")


@pytest.fixture(scope="module", params=MODELS)
def keyed(request, engines):
    return request.param, engines[request.param]


def ref_cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = a.astype(np.float64), b.astype(np.float64)
    return (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)


def reference_bank(key: str, text: str) -> np.ndarray:
    """transformers' "bank" at every hidden state [l, d] (one piece in both vocabularies)."""
    ora = oracle(key)
    pieces = ora.tokenizer.convert_ids_to_tokens(ora.ids(text))
    where = [i for i, p in enumerate(pieces) if p.lstrip("Ġ") == "bank"]
    assert len(where) == 1, pieces
    return reference(key, text).hidden_ltd[:, where[0]]


def reference_probe(key: str, word: str) -> np.ndarray:
    """A probe run alone through transformers: the mean of its pieces ([CLS]/[SEP] left out)."""
    hidden = reference(key, word).hidden_ltd
    return hidden[:, 1:-1].mean(1) if key == "minilm" else hidden.mean(1)


def test_bank_probes_are_the_reference_models_cosines(keyed):
    key, engine = keyed
    b = bank_probes(
        trace_sentence(engine, BANK_RIVER),
        trace_sentence(engine, BANK_MONEY),
        BANK_PROBES,
        embed_words(engine, list(BANK_PROBES)),
    )
    river, money = reference_bank(key, BANK_RIVER), reference_bank(key, BANK_MONEY)
    probes_lpd = np.stack([reference_probe(key, w) for w in BANK_PROBES], axis=1)
    tol = 2e-4
    np.testing.assert_allclose(b.river_before_p, ref_cosine(river[0], probes_lpd[0]), atol=tol)
    np.testing.assert_allclose(b.money_before_p, ref_cosine(money[0], probes_lpd[0]), atol=tol)
    np.testing.assert_allclose(b.river_after_p, ref_cosine(river[-1], probes_lpd[-1]), atol=tol)
    np.testing.assert_allclose(b.money_after_p, ref_cosine(money[-1], probes_lpd[-1]), atol=tol)
    assert b.same_after == pytest.approx(float(ref_cosine(river[-1], money[-1])), abs=tol)
    # before attention "bank" is the same vector in both sentences (same piece, same position)
    np.testing.assert_array_equal(river[0], money[0])
    np.testing.assert_array_equal(b.river_before_p, b.money_before_p)
    assert b.same_before == pytest.approx(1.0)
    assert b.same_after < 0.99  # the layers move the two apart


def test_the_sentences_are_fair_as_the_page_says(keyed):
    """ "bank" is the last word at the same place in both, and no probe word is in either."""
    _, engine = keyed
    river, money = (trace_sentence(engine, s) for s in (BANK_RIVER, BANK_MONEY))
    assert bank_vector(river).shape == bank_vector(money).shape
    for trace in (river, money):
        words = [w.lower() for w, _ in split_words(trace.tokens.tokens)]
        assert words[-1] == "bank" and not set(words) & set(BANK_PROBES)
    spans = [[p for w, p in split_words(t.tokens.tokens) if w == "bank"] for t in (river, money)]
    assert spans[0] == spans[1]  # the same token position


def test_which_way_each_probe_leans(keyed):
    _, engine = keyed
    b = bank_probes(
        trace_sentence(engine, BANK_RIVER),
        trace_sentence(engine, BANK_MONEY),
        BANK_PROBES,
        embed_words(engine, list(BANK_PROBES)),
    )
    np.testing.assert_array_equal(b.raw_river_nearer_p, b.river_after_p > b.money_after_p)
    # beyond the shift all probes share: each cosine less its sentence's mean over the probes
    river, money = b.river_after_p, b.money_after_p
    nearer = river - river.mean() > money - money.mean()
    np.testing.assert_array_equal(b.river_nearer_p, nearer)
    assert b.shared_shift == pytest.approx(money.mean() - river.mean())
    river_side = np.array([p in RIVER_SIDE for p in BANK_PROBES])
    np.testing.assert_array_equal(b.as_expected_p, nearer == river_side)
    with pytest.raises(ValueError, match="not a word"):
        bank_vector(trace_sentence(engine, "the river was muddy"))


def test_the_slips_sizes_are_the_reference_models(keyed):
    key, engine = keyed
    ora = oracle(key)
    s = model_sizes(engine.config, trace_sentence(engine, PIECES_WORD))
    table = ora.model.get_input_embeddings().weight
    assert s.table_shape == tuple(table.shape)  # one row per word piece, d_model wide
    assert table.requires_grad  # a parameter of the model, trained with the rest
    assert s.d_head == ora.d_head and s.n_heads == ora.n_heads
    assert s.d_head * s.n_heads == s.d_model and s.d_head < s.d_model  # V is smaller than E
    pieces = ora.tokenizer.convert_ids_to_tokens(ora.ids(PIECES_WORD))
    assert list(s.pieces) == [p for p in pieces if p not in ("[CLS]", "[SEP]")]
    assert len(s.pieces) > 1
