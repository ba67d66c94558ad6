"""The pooled sentence embedding against sentence-transformers' own ``encode``.

The long sentence past 256 tokens checks the truncation rule: sentence-transformers cuts at its
``max_seq_length`` (256) before pooling, although the BERT underneath takes 512 positions.
"""

from __future__ import annotations

import numpy as np
import pytest

sentence_transformers = pytest.importorskip("sentence_transformers")

from attention_core import tokenize, trace_sentence  # noqa: E402
from tests.core.sentences import SENTENCES  # noqa: E402


@pytest.fixture(scope="module")
def st_model(model):
    return sentence_transformers.SentenceTransformer(str(model.path), device="cpu")


def test_max_seq_length_is_read_from_the_folder(model, st_model):
    assert model.config.max_seq_length == st_model.max_seq_length == 256


@pytest.fixture(scope="module")
def traces(model):
    return {name: trace_sentence(model, text) for name, text in SENTENCES.items()}


@pytest.fixture(scope="module")
def encoded(st_model):
    return {name: st_model.encode(text, convert_to_numpy=True) for name, text in SENTENCES.items()}


@pytest.mark.parametrize("name", list(SENTENCES))
def test_sentence_embedding_equals_encode(traces, encoded, name):
    theirs = encoded[name]
    ours = traces[name].sentence_embedding_d
    assert ours.shape == theirs.shape == (384,)
    assert ours.dtype == np.float32
    cos = float(ours @ theirs / (np.linalg.norm(ours) * np.linalg.norm(theirs)))
    assert cos >= 0.99999, f"{name}: cosine {cos}"
    np.testing.assert_allclose(np.linalg.norm(ours), 1.0, atol=1e-5)


def test_past_256_tokens_the_embedding_pools_the_first_256_only(model, traces, encoded):
    assert len(tokenize(model, SENTENCES["long_256"])) > 256
    full = traces["long_256"]
    # Pooling the whole 313-token pass would differ from what encode returns.
    pooled_all = full.hidden_ltd[-1].mean(axis=0)
    pooled_all /= np.linalg.norm(pooled_all)
    theirs = encoded["long_256"]
    assert float(pooled_all @ theirs) < 0.99999
    assert float(full.sentence_embedding_d @ theirs) >= 0.99999
    # The patterns still cover every token.
    assert full.pattern_lhqk.shape[-1] == len(full.tokens) > 256


def test_past_256_tokens_the_window_pass_runs_when_the_vector_is_first_asked_for(model, encoded):
    # The pages that show only the heads never pay for the window's pass (~120 ms at 256 tokens).
    trace = trace_sentence(model, SENTENCES["long_256"])
    assert trace.pooled_d is None and trace.window is not None
    first = trace.sentence_embedding_d
    assert trace.pooled_d is first and not first.flags.writeable  # kept, read-only
    assert trace.sentence_embedding_d is first  # not computed again
    assert float(first @ encoded["long_256"]) >= 0.99999
    short = trace_sentence(model, "the river bank was muddy")
    assert short.pooled_d is not None  # within the window: the pass itself gives it
