"""The one multi-head attention with its masks (causal, padding, cross-attention memory) against
the encoder's own pass, and every row a distribution or zero."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from attention_core import (
    WhatIf,
    multi_head_attention,
    padded_input,
    run_model,
    tokenize,
    trace_sentence,
)

SOURCE = "The river bank was muddy"
TARGET = "the shore of the stream was wet and cold"


def test_self_attention_is_the_encoders_attention(model):
    trace = trace_sentence(model, TARGET)
    for layer in (0, 3, 5):
        x = trace.hidden_ltd[layer]
        attn = multi_head_attention(model.params.layer(layer), x)
        np.testing.assert_allclose(attn.q_hqe, trace.q_lhqe[layer], atol=1e-5)
        np.testing.assert_allclose(attn.pattern_hqk, trace.pattern_lhqk[layer], atol=1e-6)
        np.testing.assert_allclose(attn.delta_qd, trace.delta_ltd[layer], atol=1e-5)


def _hiding(mask_k):
    """The what-if that hides the keys ``mask_k`` marks False."""
    return WhatIf(hidden=tuple(int(i) for i in np.flatnonzero(~mask_k)))


def test_causal_self_attention_matches_the_causal_forward_pass(model):
    tokens = tokenize(model, TARGET)
    causal = run_model(model, tokens, WhatIf(causal=True))
    x = causal.hidden_ltd[0]
    attn = multi_head_attention(model.params.layer(0), x, whatif=WhatIf(causal=True))
    np.testing.assert_allclose(attn.pattern_hqk, causal.pattern_lhqk[0], atol=1e-6)


def test_padding_mask_leaves_real_tokens_as_if_unpadded(model):
    trace = trace_sentence(model, SOURCE)
    n = trace.n_tokens
    x, mask = padded_input(model, trace.tokens, 3)
    assert x.shape == (n + 3, model.config.d_model)
    assert mask.tolist() == [True] * n + [False] * 3
    masked = multi_head_attention(model.params.layer(0), x, whatif=_hiding(mask))
    assert np.all(masked.pattern_hqk[:, :, n:] == 0.0)
    np.testing.assert_allclose(masked.pattern_hqk[:, :n, :n], trace.pattern_lhqk[0], atol=1e-6)
    free = multi_head_attention(model.params.layer(0), x)
    assert free.pattern_hqk[:, :n, n:].sum() > 0.01  # without the mask weight leaks to [PAD]


def test_bad_inputs_are_refused_with_the_shapes(model):
    x = np.zeros((4, model.config.d_model), np.float32)
    with pytest.raises(ValueError, match=r"layer 6 is outside 0\.\.5"):
        multi_head_attention(model.params.layer(6), x)
    with pytest.raises(ValueError, match=r"memory_kd must be \[n, 384\]"):
        multi_head_attention(model.params.layer(0), x, np.zeros((4, 10), np.float32))
    with pytest.raises(ValueError, match="n_pad"):
        padded_input(model, tokenize(model, SOURCE), 600)


@settings(max_examples=25, deadline=None)
@given(
    n_q=hs.integers(1, 7),
    n_k=hs.integers(1, 7),
    seed=hs.integers(0, 10_000),
    causal=hs.booleans(),
    data=hs.data(),
)
def test_rows_are_distributions_or_zero_when_all_hidden(model, n_q, n_k, seed, causal, data):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n_q, model.config.d_model)).astype(np.float32)
    memory = rng.standard_normal((n_k, model.config.d_model)).astype(np.float32)
    mask = np.array(data.draw(hs.lists(hs.booleans(), min_size=n_k, max_size=n_k)))
    switches = replace(_hiding(mask), causal=causal)
    attn = multi_head_attention(model.params.layer(1), x, memory, whatif=switches)
    assert np.isfinite(attn.pattern_hqk).all() and np.isfinite(attn.delta_qd).all()
    assert np.all(attn.pattern_hqk[:, ~attn.allowed_qk] == 0.0)
    sums = attn.pattern_hqk.sum(axis=-1)
    expected = attn.allowed_qk.any(axis=1).astype(np.float32)
    np.testing.assert_allclose(sums, np.broadcast_to(expected, sums.shape), atol=1e-5)


def test_cross_attention_matches_torch_multihead_attention(model):
    """Queries from one sentence, keys and values from another (the memory), layer 2's weights:
    the same numbers as torch's MultiheadAttention with those weights."""
    import torch

    query_td = trace_sentence(model, TARGET).hidden_ltd[2]
    memory_kd = trace_sentence(model, SOURCE).hidden_ltd[-1]
    assert len(query_td) != len(memory_kd)  # the shapes mean something only when they differ
    attn = multi_head_attention(model.params.layer(2), query_td, memory_kd)
    w, pre = model.weights, "encoder.layer.2.attention"
    mha = torch.nn.MultiheadAttention(model.config.d_model, model.config.n_heads, batch_first=True)
    names = ("query", "key", "value")
    with torch.no_grad():
        mha.in_proj_weight.copy_(
            torch.from_numpy(np.concatenate([w[f"{pre}.self.{n}.weight"] for n in names]))
        )
        mha.in_proj_bias.copy_(
            torch.from_numpy(np.concatenate([w[f"{pre}.self.{n}.bias"] for n in names]))
        )
        mha.out_proj.weight.copy_(torch.tensor(w[f"{pre}.output.dense.weight"]))
        mha.out_proj.bias.copy_(torch.tensor(w[f"{pre}.output.dense.bias"]))
        q, m = torch.from_numpy(query_td[None]), torch.from_numpy(memory_kd[None])
        out, weights = mha(q, m, m, need_weights=True, average_attn_weights=False)
    assert attn.pattern_hqk.shape == (model.config.n_heads, len(query_td), len(memory_kd))
    np.testing.assert_allclose(attn.delta_qd, out[0].numpy(), atol=5e-5)
    np.testing.assert_allclose(attn.pattern_hqk, weights[0].numpy(), atol=1e-6)
