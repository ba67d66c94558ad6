"""The fast paths of the forward pass give what the plain building blocks give.

run_model writes the pattern with ``pattern_into`` (skipping attention_steps' clip when no row
needs it), GELU and LayerNorm in place and in blocks, and shares one read-only stacked W_O per
model; these tests pin each shortcut to the readable reference it replaces.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_core import WhatIf, run_model, tokenize
from attention_core.core import functional as fn

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ANY_F32 = st.floats(width=32, allow_nan=True, allow_infinity=True)
WIDE_F32 = st.floats(float(np.float32(-3e38)), float(np.float32(3e38)), width=32)


@st.composite
def score_cases(draw):
    h, q, k = draw(st.integers(1, 3)), draw(st.integers(1, 6)), draw(st.integers(1, 6))
    scores_hqk = draw(arrays(np.float32, (h, q, k), elements=st.one_of(WIDE_F32, ANY_F32)))
    temperature = draw(st.sampled_from([1e-30, 1e-6, 0.5, 1.0, 3.0, 1e30]))
    mask_k = draw(st.one_of(st.none(), arrays(np.bool_, (k,))))
    return scores_hqk, temperature, draw(st.booleans()), draw(st.booleans()), mask_k


@SETTINGS
@given(score_cases())
def test_pattern_into_equals_attention_steps_bit_for_bit(case):
    scores_hqk, temperature, scale, causal, mask_k = case
    kwargs = {"scale": scale, "temperature": temperature, "causal": causal, "key_mask_k": mask_k}
    with np.errstate(all="ignore"):
        expected = fn.attention_steps(scores_hqk, 32, **kwargs).pattern
        got = fn.pattern_into(scores_hqk, 32, np.empty_like(scores_hqk), **kwargs)
    np.testing.assert_array_equal(got, expected)


def test_pattern_into_clips_rows_whose_max_is_at_the_bottom_of_float32():
    # Over a temperature of 0.5, -big/2 scales to -big and -big overflows to -inf; clipped back
    # to -big the two tie (0.5 each), where unclipped the -inf would take nothing.
    big = np.finfo(np.float32).max
    scores = np.array([[[-big / 2, -big]]], np.float32)
    with np.errstate(all="ignore"):
        expected = fn.attention_steps(scores, 1, temperature=0.5).pattern
        got = fn.pattern_into(scores, 1, np.empty_like(scores), temperature=0.5)
    np.testing.assert_array_equal(got, [[[0.5, 0.5]]])
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("size", [1, 7, fn.GELU_CHUNK - 1, fn.GELU_CHUNK, 2 * fn.GELU_CHUNK + 3])
def test_gelu_blocks_match_one_pass_and_the_exact_erf(size):
    from scipy.special import erf

    x = np.random.default_rng(size).normal(0, 4, size).astype(np.float32)
    x[:3] = [0.0, -0.0, 9.5][: min(3, size)]
    exact = 0.5 * x.astype(np.float64) * (1 + erf(x.astype(np.float64) / np.sqrt(2)))
    got = fn.gelu_into(x, np.empty_like(x))
    np.testing.assert_allclose(got, exact, rtol=2e-6, atol=1e-7)
    np.testing.assert_array_equal(got, fn.gelu(x))
    assert got.dtype == np.float32


def test_layer_norm_into_in_place_equals_the_copy():
    x = np.random.default_rng(0).normal(3, 2, (5, 384)).astype(np.float32)
    gamma, beta = np.float32(1.5) * np.ones(384, np.float32), np.zeros(384, np.float32)
    expected = fn.layer_norm(x, gamma, beta)
    np.testing.assert_array_equal(fn.layer_norm_into(x.copy(), gamma, beta, 1e-12, x), expected)
    assert expected.dtype == np.float32


def test_trace_arrays_are_float32_and_contiguous(model):
    trace = run_model(model, tokenize(model, "The bank of the river."), WhatIf(causal=True))
    for name in ("q_lhqe", "scores_lhqk", "pattern_lhqk", "z_lhqe", "delta_ltd", "hidden_ltd"):
        value = getattr(trace, name)
        assert value.dtype == np.float32 and value.flags.c_contiguous, name
    assert not trace.w_o_lhed.flags.writeable  # shared by every trace of the model
    np.testing.assert_allclose(
        trace.head_delta_lhtd.sum(axis=1) + _o_bias(model), trace.delta_ltd, atol=2e-5
    )


def _o_bias(model):
    names = [f"encoder.layer.{i}.attention.output.dense.bias" for i in range(6)]
    return np.stack([model.weights[n] for n in names])[:, None, :]


def test_the_laid_out_weights_are_the_checkpoints_and_read_only(model):
    """model.params is the checkpoint's tensors (torch's [out, in] names) laid out [in, out]."""
    raw, d, e = model.weights, model.config.d_model, model.config.d_head
    for layer in (0, 5):
        lw, pre = model.params.layer(layer), f"encoder.layer.{layer}.attention"
        for view, name in ((lw.w_q_hde, "query"), (lw.w_k_hde, "key"), (lw.w_v_hde, "value")):
            w = raw[f"{pre}.self.{name}.weight"]  # [h·e, d]
            for head in (0, 7):
                np.testing.assert_array_equal(view[head], w[head * e : (head + 1) * e].T)
        np.testing.assert_array_equal(lw.b_q_he.reshape(-1), raw[f"{pre}.self.query.bias"])
        w_o = raw[f"{pre}.output.dense.weight"].T
        np.testing.assert_array_equal(lw.w_o_hed.reshape(-1, d), w_o)
        np.testing.assert_array_equal(model.params.w_o_lhed[layer], lw.w_o_hed)
    assert all(not a.flags.writeable for a in model.params.arrays())
    with pytest.raises(ValueError, match=r"layer 6 is outside 0\.\.5"):
        model.params.layer(6)
