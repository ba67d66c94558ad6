"""Numerics at the edges: temperatures near 0 and very large, huge scores, all-masked rows, 512
identical tokens. Every pattern stays finite, every row sums to 1 (or is all zeros when every
key is hidden), and nothing the pattern page sends (the explorer's data, the scores its route
serves, the numbers table) holds NaN/inf; only the masked stage has gaps."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_core import WhatIf, attention_steps, trace_sentence
from tests.app.conftest import open_page
from tests.app.test_page_pattern import open_numbers
from ui.routes import block_bytes

D_K = 32
BIG = float(np.finfo(np.float32).max)  # any finite float32 score (overflow is clipped)
SENTENCE = "The river bank was muddy after the rain"


@pytest.fixture(scope="module")
def scores_hqk(model):
    """Real raw scores of every head of layer 2."""
    return trace_sentence(model, SENTENCE).scores_lhqk[2]


def assert_rows_are_distributions(pattern, allowed=None) -> None:
    assert np.isfinite(pattern).all()
    assert (pattern >= 0).all()
    sums = pattern.sum(axis=-1)
    if allowed is None:
        np.testing.assert_allclose(sums, 1.0, atol=1e-5)
        return
    visible = allowed.any(axis=-1)  # [q]: rows with at least one key left
    np.testing.assert_allclose(sums[..., visible], 1.0, atol=1e-5)
    assert (pattern[..., ~visible, :] == 0).all()  # all-masked rows: zeros, never NaN
    assert (pattern[..., ~allowed] == 0).all()


@pytest.mark.parametrize("temperature", [1e-3, 1e3])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("scale", [False, True])
def test_extreme_temperatures_keep_patterns_finite(scores_hqk, temperature, causal, scale):
    steps = attention_steps(scores_hqk, D_K, scale=scale, temperature=temperature, causal=causal)
    assert np.isfinite(steps.scaled).all()
    assert_rows_are_distributions(steps.pattern, steps.allowed_qk)
    top = steps.pattern.max(axis=-1)
    if temperature < 1:  # near 0: each row picks (almost) a single key, its largest score
        assert (top > 0.99).mean() > 0.9
        best = np.where(steps.allowed_qk, scores_hqk, -np.inf).argmax(axis=-1)
        np.testing.assert_array_equal(steps.pattern.argmax(axis=-1), best)
    else:  # very large: every visible key gets about the same weight
        n_visible = steps.allowed_qk.sum(axis=-1)
        np.testing.assert_allclose(top, np.broadcast_to(1 / n_visible, top.shape), rtol=0.05)


@pytest.mark.parametrize("temperature", [1e-3, 1e3])
def test_the_whole_forward_pass_survives_extreme_temperatures(model, temperature):
    trace = trace_sentence(model, SENTENCE, WhatIf(causal=True, temperature=temperature))
    assert_rows_are_distributions(trace.pattern_lhqk)
    for name in ("z_lhqe", "delta_ltd", "hidden_ltd", "sentence_embedding_d"):
        assert np.isfinite(getattr(trace, name)).all(), name


def test_causal_and_key_mask_together_give_zero_rows():
    scores = np.random.default_rng(0).normal(size=(3, 5, 5)).astype(np.float32)
    keys = np.array([False, False, True, True, True])  # the first two keys are padding
    steps = attention_steps(scores, D_K, causal=True, key_mask_k=keys)
    # queries 0 and 1 may only see keys 0..q, all of them padding: nothing left to attend to
    assert not steps.allowed_qk[:2].any() and steps.allowed_qk[2:].any(axis=-1).all()
    assert (steps.pattern[:, :2] == 0).all()
    assert_rows_are_distributions(steps.pattern, steps.allowed_qk)
    assert np.isneginf(steps.masked[:, :2]).all()  # shown as blank gaps, not as numbers


@settings(max_examples=60, deadline=None)
@given(
    scores=arrays(np.float32, (2, 6, 6), elements=st.floats(-BIG, BIG, width=32)),
    temperature=st.sampled_from([1e-3, 0.05, 1.0, 5.0, 1e3]),
    causal=st.booleans(),
    keys=arrays(np.bool_, 6),
)
def test_any_finite_scores_give_finite_patterns(scores, temperature, causal, keys):
    steps = attention_steps(scores, D_K, temperature=temperature, causal=causal, key_mask_k=keys)
    assert np.isfinite(steps.scaled).all()
    assert_rows_are_distributions(steps.pattern, steps.allowed_qk)


def test_scores_that_overflow_when_scaled_are_not_taken_for_masked():
    scores = np.full((1, 3, 3), -1e37, dtype=np.float32)  # / (√32 · 1e-3) < -3.4e38: -inf
    steps = attention_steps(scores, D_K, temperature=1e-3)
    assert_rows_are_distributions(steps.pattern, steps.allowed_qk)


@pytest.fixture(scope="module")
def bank_512(model):
    """512 identical words: the text, and the engine's trace of it (cut at 512 tokens)."""
    text = "bank " * 600
    return text, trace_sentence(model, text)


def test_512_identical_tokens(bank_512):
    _, trace = bank_512
    assert trace.n_tokens == 512 and trace.tokens.n_cut == 602 - 512
    assert set(trace.tokens.tokens[1:-1]) == {"bank"}
    assert_rows_are_distributions(trace.pattern_lhqk)
    for name in ("scores_lhqk", "hidden_ltd", "sentence_embedding_d"):
        assert np.isfinite(getattr(trace, name)).all(), name
    # identical words differ only by position: their rows are not all the same
    assert np.ptp(trace.pattern_lhqk[0, 0, 1:-1].max(axis=-1)) > 0


def _strict_json(text: str):
    """JSON as a browser parses it: NaN and Infinity are not JSON."""

    def refuse(name: str):
        raise AssertionError(f"{name} in the explorer's data")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize(
    "settings_",
    [
        {"temp": "0.05", "causal": "1"},  # the slider's ends
        {"temp": "5.0", "scale": "0", "hide_special": "1"},
    ],
)
def test_pattern_page_at_the_temperature_ends_with_512_identical_tokens(bank_512, settings_):
    text, trace = bank_512
    at = open_page("pattern", s=text, **settings_)
    assert not at.exception and not at.sidebar.warning
    [element] = at.get("bidi_component")  # the browser draws the stages from the engine's scores
    data = _strict_json(element.proto.json)
    temp, causal = float(settings_["temp"]), settings_.get("causal") == "1"
    scale, hide = settings_.get("scale") != "0", settings_.get("hide_special") == "1"
    view = data["view"]
    switches = (view["temp"], view["causal"], view["scale"], view["hide_special"])
    assert switches == (temp, causal, scale, hide)
    header = data["header"]
    assert header["n_tokens"] == 512 and header["tokens"] == list(trace.tokens.tokens)
    layer, head = view["layer"], view["head"]
    scores = np.frombuffer(block_bytes(data["model"], text, layer, "scores"), "<f4")
    np.testing.assert_array_equal(scores, trace.scores_lhqk[layer].ravel())  # what it fetches
    assert np.isfinite(scores).all()

    open_numbers(at)
    assert not at.exception and not at.dataframe  # 512×512 is sent only when asked for
    at.toggle(key="pattern_big_table").set_value(True).run()
    assert not at.exception
    pattern = at.dataframe[0].value.to_numpy()
    assert np.isfinite(pattern).all()
    n = 510 if hide else 512
    assert pattern.shape == (n, n)
    steps = attention_steps(
        trace.scores_lhqk[layer, head], D_K, scale=scale, temperature=temp, causal=causal
    )
    assert_rows_are_distributions(steps.pattern, steps.allowed_qk)
    keep = np.flatnonzero(~trace.tokens.special_t) if hide else np.arange(512)
    np.testing.assert_allclose(pattern, steps.pattern[np.ix_(keep, keep)], atol=1e-6)
    if not hide:
        np.testing.assert_allclose(pattern.sum(axis=1), 1.0, atol=1e-4)
    masked = np.isneginf(steps.masked[np.ix_(keep, keep)])  # the masked stage's blank gaps
    assert masked.sum() == (n * (n - 1) // 2 if causal else 0)
    assert (pattern[masked] == 0).all()


def test_temperatures_outside_the_slider_are_refused_from_a_link(model):
    at = open_page("pattern", s=SENTENCE, temp="0.001")
    assert not at.exception
    assert "temp" in " ".join(w.value for w in at.sidebar.warning)
    assert at.session_state["temp"] == 1.0
    [element] = at.get("bidi_component")
    assert json.loads(element.proto.json)["view"]["temp"] == 1.0
    open_numbers(at)  # the numbers are the trained model's own pattern, at temperature 1
    trace = trace_sentence(model, SENTENCE)
    layer, head = at.session_state["layer"], at.session_state["head"]
    np.testing.assert_allclose(
        at.dataframe[0].value.to_numpy(), trace.pattern_lhqk[layer, head], atol=1e-6
    )
