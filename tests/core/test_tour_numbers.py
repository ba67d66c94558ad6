"""The tour's numbers (attention_core.lessons.tour_numbers) against independent references:
transformers'
BertModel read with forward hooks (the heads' summed proposals against its attention output
projection, the block's sub-steps against its modules, μ and σ against torch's var_mean and
LayerNorm), torch.topk on transformers' own attention patterns, and SciPy's linear regression."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
stats = pytest.importorskip("scipy.stats")

from attention_core import output_bias, trace_sentence  # noqa: E402
from attention_core.lessons.tour_numbers import (  # noqa: E402
    attention_share,
    block_chain,
    head_sum,
    loglog_slope,
    top_keys,
)

SENTENCE = "The fisherman sat on the river bank and watched the water"
HOOKED = {  # transformers' submodule of each layer -> what its output is in the tour's words
    "attention.output.dense": "delta",
    "attention.output": "attn_out",
    "intermediate": "gelu",
    "output.dense": "ffn",
}


@pytest.fixture(scope="module")
def trace(model):
    return trace_sentence(model, SENTENCE)


@pytest.fixture(scope="module")
def reference(model, trace):
    """transformers' BertModel on the trace's token ids: patterns, hidden states and the hooked
    module outputs per (layer, name), each [t, ...] as float64."""
    hf = transformers.AutoModel.from_pretrained(str(model.path), attn_implementation="eager")
    captured: dict[tuple[int, str], np.ndarray] = {}
    handles = []
    for i, layer in enumerate(hf.eval().encoder.layer):
        for path, name in HOOKED.items():

            def hook(_module, _inputs, output, key=(i, name)):
                out = output[0] if isinstance(output, tuple) else output
                captured[key] = out[0].detach().double().numpy()

            handles.append(layer.get_submodule(path).register_forward_hook(hook))
    try:
        with torch.no_grad():
            out = hf(
                input_ids=torch.from_numpy(trace.tokens.input_ids_t.copy())[None],
                output_attentions=True,
                output_hidden_states=True,
            )
    finally:
        for handle in handles:
            handle.remove()
    return hf, out, captured


LAYER_TOKENS = [(0, 1), (2, 4), (5, 7)]


@pytest.mark.parametrize(("layer", "token"), LAYER_TOKENS)
def test_the_heads_proposals_sum_to_bert_s_attention_output(model, trace, reference, layer, token):
    _, _, captured = reference
    heads = head_sum(trace, output_bias(model, layer), layer, token)
    torch_delta = captured[(layer, "delta")][token]
    np.testing.assert_allclose(heads.total_d, torch_delta, atol=2e-5)
    assert heads.gap < 1e-4  # the sum against the engine's own ΔE
    assert heads.norms_h.shape == (trace.config.n_heads,)
    np.testing.assert_allclose(np.linalg.norm(heads.norms_h), np.linalg.norm(heads.proposals_hd))


@pytest.mark.parametrize(("layer", "token"), LAYER_TOKENS)
def test_a_token_through_a_block_equals_bert_s_modules(trace, reference, layer, token):
    hf, out, captured = reference
    chain = block_chain(trace, layer, token)
    hidden = [h[0].double().numpy() for h in out.hidden_states]
    expected = {
        "x_d": hidden[layer][token],
        "delta_d": captured[(layer, "delta")][token],
        "attn_out_d": captured[(layer, "attn_out")][token],
        "ffn_d": captured[(layer, "ffn")][token],
        "out_d": hidden[layer + 1][token],
    }
    for name, want in expected.items():
        np.testing.assert_allclose(getattr(chain, name), want, atol=5e-5, err_msg=name)
    np.testing.assert_allclose(chain.mid_d, expected["x_d"] + expected["delta_d"], atol=5e-5)
    np.testing.assert_allclose(chain.resid_d, expected["attn_out_d"] + expected["ffn_d"], atol=5e-5)
    assert len(chain.vectors()) == 7 and chain.vectors()[0] is chain.x_d
    gelu = captured[(layer, "gelu")][token]
    assert chain.d_ff == gelu.shape[-1] == hf.config.intermediate_size
    assert chain.n_active == int((gelu > 0).sum())


@pytest.mark.parametrize(("layer", "token"), LAYER_TOKENS)
def test_mu_and_sigma_are_what_layernorm_divides_by(trace, reference, layer, token):
    hf, _, _ = reference
    chain = block_chain(trace, layer, token)
    mid = torch.from_numpy(chain.mid_d.astype(np.float64))
    var, mean = torch.var_mean(mid, unbiased=False)
    assert chain.mid_mean == pytest.approx(float(mean), abs=1e-9)
    assert chain.mid_std == pytest.approx(float(var.sqrt()), rel=1e-9)
    norm = hf.encoder.layer[layer].attention.output.LayerNorm
    gamma, beta = norm.weight.detach().double().numpy(), norm.bias.detach().double().numpy()
    by_hand = gamma * (chain.mid_d - chain.mid_mean) / np.sqrt(chain.mid_std**2 + norm.eps) + beta
    np.testing.assert_allclose(by_hand, chain.attn_out_d, atol=5e-5)


@pytest.mark.parametrize(("layer", "head"), [(0, 0), (3, 7), (5, 11)])
def test_top_keys_are_torch_topk_of_bert_s_own_pattern(trace, reference, layer, head):
    _, out, _ = reference
    torch_pattern = out.attentions[layer][0, head].double()
    shares, keys = torch.topk(torch_pattern, 3, dim=-1)
    top = top_keys(trace.pattern_lhqk[layer, head])
    np.testing.assert_array_equal(top.keys_qr, keys.numpy())
    np.testing.assert_allclose(top.share_qr, shares.numpy(), atol=1e-6)
    np.testing.assert_allclose(top.row_sum_q, torch_pattern.sum(-1).numpy(), atol=1e-6)


def test_top_keys_keep_the_earlier_key_on_a_tie_and_stop_at_the_row_length():
    top = top_keys(np.array([[0.25, 0.5, 0.25], [1.0, 0.0, 0.0]]), ranks=5)
    np.testing.assert_array_equal(top.keys_qr, [[1, 0, 2], [0, 1, 2]])
    np.testing.assert_array_equal(top.row_sum_q, [1.0, 1.0])


def test_the_log_log_slope_is_scipy_s_regression_over_the_last_points():
    rng = np.random.default_rng(0)
    n = np.array([16, 32, 64, 128, 256, 512])
    secs = 1e-4 * n**1.3 * rng.uniform(0.8, 1.25, n.size)  # a noisy measurement
    want = stats.linregress(np.log(n[-3:]), np.log(secs[-3:])).slope
    assert loglog_slope(n, secs, last=3) == pytest.approx(want, rel=1e-9)
    assert loglog_slope(n, 7.0 * n**2.0, last=6) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="two or more"):
        loglog_slope(n[:1], secs[:1])


def test_attention_share_is_the_part_of_each_layer_time():
    share = attention_share(np.array([1.0, 3.0]), np.array([3.0, 1.0]))
    np.testing.assert_array_equal(share, [0.25, 0.75])
