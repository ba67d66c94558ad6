"""Invariants of the NumPy building blocks (hypothesis), boundary validation, and tokenization."""

from __future__ import annotations

import math
import unicodedata

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_core import (
    BlockConfig,
    attention_steps,
    causal_mask,
    gelu,
    layer_norm,
    softmax,
    tokenize,
)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

shapes = st.tuples(st.integers(1, 3), st.integers(1, 7), st.integers(1, 7))
BIG = float(np.float32(1e30))  # logits up to ±1e30, as float32 holds them
finite = st.floats(-BIG, BIG, width=32, allow_nan=False, allow_infinity=False)
moderate = st.floats(-50, 50, width=32, allow_nan=False, allow_infinity=False)


@st.composite
def logits_with_masks(draw, elements=finite):
    """float32 logits [b, q, k] with some entries set to -inf (whole rows included)."""
    x = draw(arrays(np.float32, draw(shapes), elements=elements))
    hidden = draw(arrays(np.bool_, x.shape))
    return np.where(hidden, np.float32(-np.inf), x)


@st.composite
def scores_and_mask(draw):
    h, q, k = draw(shapes)
    scores = draw(arrays(np.float32, (h, q, k), elements=moderate))
    key_mask = draw(st.one_of(st.none(), arrays(np.bool_, (k,))))
    return scores, key_mask


# -- softmax ---------------------------------------------------------------------------------


@SETTINGS
@given(logits_with_masks())
def test_softmax_rows_sum_to_one_and_masked_entries_are_exactly_zero(x):
    p = softmax(x)
    assert p.dtype == np.float32
    assert not np.isnan(p).any() and np.isfinite(p).all()
    assert (p[np.isneginf(x)] == 0).all()
    live = np.isfinite(x).any(axis=-1)
    np.testing.assert_allclose(p.sum(axis=-1)[live], 1.0, atol=1e-5)
    assert (p[~live] == 0).all()  # a fully masked row gives exact zeros, never NaN
    assert ((p >= 0) & (p <= 1)).all()


@SETTINGS
@given(arrays(np.float32, shapes, elements=finite))
def test_softmax_is_shift_invariant_and_keeps_the_argmax(x):
    p = softmax(x)
    np.testing.assert_allclose(softmax(x - x.max(axis=-1, keepdims=True)), p, atol=1e-6)
    best = np.take_along_axis(p, x.argmax(axis=-1)[..., None], axis=-1)
    np.testing.assert_array_equal(best[..., 0], p.max(axis=-1))


def test_softmax_extremes():
    x = np.array([[1e30, -1e30, 0], [-np.inf, -np.inf, -np.inf], [np.inf, 1, -np.inf]], np.float32)
    p = softmax(x)
    assert np.isfinite(p).all()
    np.testing.assert_array_equal(p, [[1, 0, 0], [0, 0, 0], [1, 0, 0]])
    np.testing.assert_allclose(softmax(np.zeros((2, 4), np.float32)), 0.25)


# -- attention_steps -------------------------------------------------------------------------


def _reference_steps(scores, d_k, scale, temperature, causal, key_mask):
    """A plain Python loop over rows: scale, mask, stable softmax, one row at a time."""
    n_q, n_k = scores.shape[-2:]
    flat = scores.reshape(-1, n_q, n_k).astype(np.float64)
    out = np.zeros_like(flat)
    divisor = (math.sqrt(d_k) if scale else 1.0) * temperature
    for b in range(flat.shape[0]):
        for i in range(n_q):
            keep = [
                j
                for j in range(n_k)
                if (not causal or j <= i) and (key_mask is None or key_mask[j])
            ]
            if not keep:
                continue
            logits = [flat[b, i, j] / divisor for j in keep]
            top = max(logits)
            exps = [math.exp(v - top) for v in logits]
            total = sum(exps)
            for j, v in zip(keep, exps, strict=True):
                out[b, i, j] = v / total
    return out.reshape(scores.shape)


@SETTINGS
@given(
    scores_and_mask(),
    st.integers(1, 64),
    st.booleans(),
    st.floats(0.1, 10),
    st.booleans(),
)
def test_vectorized_steps_equal_a_python_loop(data, d_k, scale, temperature, causal):
    scores, key_mask = data
    steps = attention_steps(
        scores, d_k, scale=scale, temperature=temperature, causal=causal, key_mask_k=key_mask
    )
    expected = _reference_steps(scores, d_k, scale, temperature, causal, key_mask)
    np.testing.assert_allclose(steps.pattern, expected, atol=1e-5)
    for stage in (steps.scores, steps.scaled, steps.masked, steps.pattern):
        assert stage.dtype == np.float32
        assert stage.shape == scores.shape
    assert (steps.pattern[..., ~steps.allowed_qk] == 0).all()
    assert np.isneginf(steps.masked[..., ~steps.allowed_qk]).all()


@SETTINGS
@given(arrays(np.float32, shapes, elements=moderate), st.integers(1, 64))
def test_causal_pattern_is_exactly_zero_above_the_diagonal(scores, d_k):
    steps = attention_steps(scores, d_k, causal=True)
    n_q, n_k = scores.shape[-2:]
    assert (steps.pattern[..., ~causal_mask(n_q, n_k)] == 0).all()
    assert (np.triu(steps.pattern, k=1) == 0).all()
    np.testing.assert_allclose(steps.pattern.sum(axis=-1), 1.0, atol=1e-5)


@SETTINGS
@given(arrays(np.float32, shapes, elements=finite), st.sampled_from([1e-6, 1e6]))
def test_extreme_temperatures_give_no_nan_or_inf(scores, temperature):
    steps = attention_steps(scores, 32, temperature=temperature)
    assert np.isfinite(steps.pattern).all()
    np.testing.assert_allclose(steps.pattern.sum(axis=-1), 1.0, atol=1e-5)


def test_huge_temperature_is_uniform_and_tiny_temperature_is_argmax():
    scores = np.array([[1.0, 3.0, 2.0]], np.float32)
    np.testing.assert_allclose(attention_steps(scores, 1, temperature=1e6).pattern, 1 / 3, 1e-5)
    np.testing.assert_array_equal(attention_steps(scores, 1, temperature=1e-6).pattern, [[0, 1, 0]])


@SETTINGS
@given(arrays(np.float32, st.tuples(st.integers(1, 5), st.integers(1, 16)), elements=moderate))
def test_layer_norm_and_gelu_keep_float32(x):
    d = x.shape[-1]
    y = layer_norm(x, np.ones(d, np.float32), np.zeros(d, np.float32))
    assert y.dtype == np.float32 and np.isfinite(y).all()
    g = gelu(x)
    assert g.dtype == np.float32 and np.isfinite(g).all()
    exact = np.array([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x.ravel().tolist()])
    np.testing.assert_allclose(g.ravel(), exact, rtol=1e-5, atol=1e-6)


# -- validation at the boundary ---------------------------------------------------------------


def test_attention_steps_rejects_bad_inputs_naming_the_shapes():
    good = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(ValueError, match=r"\(5,\)"):
        attention_steps(np.zeros(5, np.float32), 4)
    with pytest.raises(ValueError, match=r"d_k.*got 0"):
        attention_steps(good, 0)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="temperature"):
            attention_steps(good, 4, temperature=bad)
    with pytest.raises(ValueError, match=r"\(4,\).*\(3,\)"):
        attention_steps(good, 4, key_mask_k=np.ones(3, bool))
    with pytest.raises(ValueError, match=r"\(4,\).*\(1, 4\)"):
        attention_steps(good, 4, key_mask_k=np.ones((1, 4), bool))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_heads": 0}, "n_heads"),
        ({"n_heads": 65}, "n_heads"),
        ({"d_k": 0}, "d_k"),
        ({"d_k": 1025}, "d_k"),
        ({"source": "learned"}, "source"),
        ({"combine": "mean"}, "combine"),
    ],
)
def test_block_config_validates(kwargs, match):
    with pytest.raises(ValueError, match=match):
        BlockConfig(**kwargs)


def test_block_config_is_frozen():
    cfg = BlockConfig()
    with pytest.raises(AttributeError):
        cfg.n_heads = 3  # type: ignore[misc]


# -- tokenization -----------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", " ", "\n\t  "])
def test_tokenize_rejects_empty_text(model, text):
    with pytest.raises(ValueError, match="empty"):
        tokenize(model, text)


@pytest.mark.parametrize("text", [None, b"bytes", 5, ["a list"]])
def test_tokenize_rejects_non_strings(model, text):
    with pytest.raises(ValueError, match="string"):
        tokenize(model, text)


@pytest.mark.parametrize("limit", [2, 513])
def test_tokenize_rejects_limits_outside_the_model(model, limit):
    with pytest.raises(ValueError, match=str(limit)):
        tokenize(model, "hello", max_tokens=limit)


def test_long_text_is_cut_to_512_keeping_cls_and_sep(model):
    text = " ".join(f"word{i % 10} ok" for i in range(200))  # 3 pieces a word, 600 + 2 raw
    n_raw = len(model.tokenizer.encode(text).ids)
    assert n_raw >= 600
    tokens = tokenize(model, text)
    assert len(tokens) == 512
    assert tokens.n_cut == n_raw - 512
    assert tokens.tokens[0] == "[CLS]" and tokens.tokens[-1] == "[SEP]"
    assert tokens.special_t.tolist() == [True] + [False] * 510 + [True]
    assert tokens.input_ids_t.shape == (512,) and tokens.offsets_t2.shape == (512, 2)
    short = tokenize(model, "a short one")
    assert short.n_cut == 0


def _strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@pytest.mark.parametrize(
    "text",
    [
        "The river bank was muddy, wasn't it?",
        "Unbelievably dirtiest tokenization imaginable",
        "Café naïve Zürich crème brûlée",
    ],
)
def test_offsets_map_back_to_the_text(model, text):
    tokens = tokenize(model, text)
    for piece, (start, end), special in zip(
        tokens.tokens, tokens.offsets_t2.tolist(), tokens.special_t.tolist(), strict=True
    ):
        if special:
            assert (start, end) == (0, 0)
            continue
        assert 0 <= start < end <= len(text)
        assert _strip_accents(text[start:end]) == piece.removeprefix("##")
