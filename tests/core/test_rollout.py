"""Attention rollout (Abnar & Zuidema 2020) against a reference computed from transformers'
``output_attentions`` with the paper's formula: A_l = 0.5 · mean over heads + 0.5 · I,
R_0 = A_0, R_l = A_l · R_(l-1) (in float64, here in the test's own loop). Both models."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import trace_sentence
from attention_core.methods.rollout import rollout_lqk as engine_rollout_lqk
from attention_core.methods.rollout import trace_rollout
from tests.core.oracles import SENTENCES, cli_npz, reference, rollout_lqk

KEYS = ("minilm", "smollm2")


@pytest.fixture(scope="module", params=[(k, s) for k in KEYS for s in SENTENCES], ids=str)
def pair(request, engines):
    """(our trace, the rollout of transformers' attentions) for one model and sentence."""
    key, name = request.param
    trace = trace_sentence(engines[key], SENTENCES[name])
    return trace, rollout_lqk(reference(key, SENTENCES[name]).pattern_lhqk)


def test_trace_rollout_equals_the_reference(pair):
    trace, theirs = pair
    ours = trace_rollout(trace)
    assert ours.dtype == np.float32
    assert ours.shape == theirs.shape == (trace.config.n_layers, trace.n_tokens, trace.n_tokens)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=2e-5)


def test_rollout_of_the_patterns_equals_the_reference(pair):
    trace, theirs = pair
    ours = engine_rollout_lqk(np.asarray(trace.pattern_lhqk))
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=2e-5)
    first = engine_rollout_lqk(trace.pattern_lhqk, layers=3)
    np.testing.assert_allclose(first, theirs[:3], rtol=0, atol=2e-5)


def test_rows_sum_to_one_and_a_decoder_never_reads_ahead(pair):
    trace, theirs = pair
    ours = trace_rollout(trace)
    np.testing.assert_allclose(ours.sum(axis=-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(theirs.sum(axis=-1), 1.0, atol=1e-9)
    assert (ours >= 0).all()
    if trace.config.causal:
        assert (np.triu(ours, k=1) == 0).all()


def test_layer_zero_is_half_the_mean_pattern_plus_half_the_identity(pair):
    trace, _ = pair
    pattern_hqk = np.asarray(trace.pattern_lhqk[0], np.float64)
    expected = 0.5 * pattern_hqk.mean(axis=0) + 0.5 * np.eye(trace.n_tokens)
    np.testing.assert_allclose(trace_rollout(trace)[0], expected, rtol=0, atol=1e-6)


def test_a_decoder_trace_keeps_its_rollout(smollm2):
    trace = trace_sentence(smollm2, SENTENCES["short"])
    first = trace_rollout(trace)
    assert trace_rollout(trace) is first
    assert not first.flags.writeable


@pytest.mark.parametrize("key", KEYS)
def test_the_npz_export_holds_the_rollout(key):
    text = SENTENCES["punctuation"]
    npz = cli_npz(key, text)
    theirs = rollout_lqk(reference(key, text).pattern_lhqk)
    assert npz["rollout"].shape == theirs.shape
    np.testing.assert_allclose(npz["rollout"], theirs, rtol=0, atol=2e-5)
