"""The value-update arithmetic against the forward pass, on the real packaged model."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import (
    default_token,
    largest_terms,
    load_model,
    output_bias,
    trace_sentence,
    update_steps,
    value_update,
)


@pytest.fixture(scope="module")
def model():
    return load_model()


@pytest.fixture(scope="module")
def trace(model):
    return trace_sentence(model, "dirty quantum plumbing, again and again.")


@pytest.mark.parametrize(("layer", "head"), [(0, 0), (2, 7), (5, 11)])
def test_weighted_sum_and_head_sum_match_the_forward_pass(model, trace, layer, head):
    for token in range(trace.n_tokens):
        up = value_update(trace, output_bias(model, layer), layer, head, token)
        np.testing.assert_array_equal(up.weights_k, trace.pattern_lhqk[layer, head, token])
        np.testing.assert_allclose(up.z_e, trace.z_lhqe[layer, head, token], atol=1e-5)
        np.testing.assert_allclose(up.heads_sum_d, trace.delta_ltd[layer, token], atol=1e-5)
        assert up.sum_error < 1e-5
        np.testing.assert_allclose(
            up.updated_d, trace.hidden_ltd[layer, token] + trace.delta_ltd[layer, token]
        )
        np.testing.assert_allclose(
            up.head_norms_h,
            np.linalg.norm(trace.head_delta_lhtd[layer, :, token], axis=-1),
            rtol=1e-6,  # one token's row vs the whole layer's matmul: float32 rounding
        )
    assert up.delta_norms_t.shape == (trace.n_tokens,)


def test_head_delta_is_z_through_the_heads_slice_of_w_o(model, trace):
    layer, head, token = 3, 4, 2
    up = value_update(trace, output_bias(model, layer), layer, head, token)
    w_o = model.weights[f"encoder.layer.{layer}.attention.output.dense.weight"].T
    d_head = trace.config.d_head
    np.testing.assert_allclose(
        up.z_e @ w_o[head * d_head : (head + 1) * d_head], up.head_delta_d, atol=1e-5
    )


def test_update_steps_are_in_order(model, trace):
    up = value_update(trace, output_bias(model, 1), 1, 1, 1)
    steps = update_steps(up)
    names = list(steps)
    assert names[0].startswith("z") and names[5].startswith("E + ΔE")
    assert names[-1].startswith("after the block")
    assert [v.size for v in steps.values()] == [32] + [384] * 8
    # post-norm BERT: the block's output is LayerNorm(LayerNorm(E + ΔE) + FFN(…)), as the pass
    np.testing.assert_array_equal(steps["LayerNorm(E + ΔE)"], trace.attn_out_ltd[1, 1])
    np.testing.assert_array_equal(steps["feed-forward's update"], trace.ffn_out_ltd[1, 1])
    np.testing.assert_array_equal(steps[names[-1]], trace.hidden_ltd[2, 1])
    w = model.weights
    ln = "encoder.layer.1.attention.output.LayerNorm"
    mean, var = up.updated_d.mean(), up.updated_d.var()
    normed = (up.updated_d - mean) / np.sqrt(var + 1e-12) * w[f"{ln}.weight"] + w[f"{ln}.bias"]
    np.testing.assert_allclose(steps["LayerNorm(E + ΔE)"], normed, atol=1e-5)


def test_bad_indices_raise(model, trace):
    with pytest.raises(ValueError, match="outside"):
        value_update(trace, output_bias(model, 0), 0, 12, 0)
    with pytest.raises(ValueError, match="outside"):
        output_bias(model, 6)
    with pytest.raises(ValueError, match="bias shape"):
        value_update(trace, np.zeros(3, np.float32), 0, 0, 0)


def test_default_token_is_the_last_real_word():
    special = np.array([True, False, False, False, False, True])
    assert default_token(["[CLS]", "the", "bank", "##s", ".", "[SEP]"], special) == 3
    assert default_token(["[CLS]", "!", "[SEP]"], np.array([True, False, True])) == 1
    assert default_token(["[CLS]", "[SEP]"], np.array([True, True])) == 0


def test_largest_terms():
    weights = np.array([0.1, 0.55, 0.001, 0.3, 0.049], np.float32)
    assert largest_terms(weights).tolist() == [1, 3, 0, 4]
    assert largest_terms(weights, limit=2).tolist() == [1, 3]
    assert largest_terms(weights, floor=0.9).tolist() == [1]


def test_the_decoders_update_has_no_bias_and_no_norm_between_blocks(smollm2):
    # Pre-norm Llama: ΔE = Σ_h z_h·W_O,h (o_proj has no bias), and the stream after a block is
    # E + ΔE + the MLP's update as it is (transformers' hidden_states; the last after its norm).
    trace = trace_sentence(smollm2, "dirty quantum plumbing")
    bias = output_bias(smollm2, 3)
    assert bias.shape == (576,) and not bias.any()
    up = value_update(trace, bias, 3, 4, trace.n_tokens - 1)
    assert up.normed_d is None and up.sum_error < 1e-4 * np.abs(up.delta_d).max()
    steps = update_steps(up)
    assert list(steps)[-1] == "after the block: E+ΔE+feed-forward"
    after = up.updated_d.astype(np.float64) + up.ffn_out_d
    np.testing.assert_allclose(up.next_d, after, rtol=0, atol=1e-5 * np.abs(after).max())
    last = value_update(trace, bias, 29, 0, 0)
    assert list(update_steps(last, last_layer=True))[-1] == "after the final RMSNorm"
