"""The NumPy forward pass against transformers' own BertModel (eager attention), module by module.

Every intermediate of the trace is compared with the output of the matching torch module, read
with forward hooks on the same input ids: Q, K, V (the query/key/value Linear layers), the
attention update ΔE (attention.output.dense), the post-attention LayerNorm (attention.output),
the feed-forward GELU (intermediate), the patterns (output_attentions) and the hidden states.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from attention_core import run_model, softmax, tokenize  # noqa: E402
from tests.core.sentences import SENTENCES  # noqa: E402

# The torch submodules hooked in every layer, under the names used below.
HOOKED = {
    "query": "attention.self.query",
    "key": "attention.self.key",
    "value": "attention.self.value",
    "dense": "attention.output.dense",
    "attn_out": "attention.output",
    "ffn_hidden": "intermediate",
}


@pytest.fixture(scope="module")
def hf_model(model):
    hf = transformers.AutoModel.from_pretrained(str(model.path), attn_implementation="eager")
    return hf.eval()


@pytest.fixture(scope="module")
def hf_tokenizer(model):
    return transformers.AutoTokenizer.from_pretrained(str(model.path))


def _run_hooked(hf_model, input_ids_t: np.ndarray):
    """Run the torch model; return its output and {(layer, name): output array [t, ...]}."""
    captured: dict[tuple[int, str], np.ndarray] = {}
    handles = []
    for i, layer in enumerate(hf_model.encoder.layer):
        for name, path in HOOKED.items():

            def hook(_module, _inputs, output, key=(i, name)):
                out = output[0] if isinstance(output, tuple) else output
                captured[key] = out[0].detach().numpy().copy()

            handles.append(layer.get_submodule(path).register_forward_hook(hook))
    try:
        with torch.no_grad():
            out = hf_model(
                input_ids=torch.from_numpy(input_ids_t)[None],
                output_attentions=True,
                output_hidden_states=True,
            )
    finally:
        for handle in handles:
            handle.remove()
    return out, captured


@pytest.fixture(scope="module", params=list(SENTENCES), ids=list(SENTENCES))
def pair(request, model, hf_model):
    """(our trace, torch output, hooked module outputs) for one sentence."""
    trace = run_model(model, tokenize(model, SENTENCES[request.param]))
    out, captured = _run_hooked(hf_model, trace.tokens.input_ids_t)
    return trace, out, captured


def _heads(x_td: np.ndarray, n_heads: int) -> np.ndarray:
    t, d = x_td.shape
    return x_td.reshape(t, n_heads, d // n_heads).transpose(1, 0, 2)  # [t,d] -> [h,t,e]


def test_sentence_lengths_cover_both_windows(model):
    lengths = {name: len(tokenize(model, s)) for name, s in SENTENCES.items()}
    assert 200 < lengths["long_200"] <= 256
    assert 256 < lengths["long_256"] <= 512


@pytest.mark.parametrize("name", list(SENTENCES))
def test_tokens_equal_the_transformers_tokenizer(model, hf_tokenizer, name):
    text = SENTENCES[name]
    trace_tokens = tokenize(model, text)
    # tokenizer.json has fixed padding to 128 switched on; ask for none.
    enc = hf_tokenizer(text, padding=False, truncation=False)
    assert trace_tokens.input_ids_t.tolist() == enc["input_ids"]
    assert list(trace_tokens.tokens) == hf_tokenizer.convert_ids_to_tokens(enc["input_ids"])


def test_patterns_equal_output_attentions(pair):
    trace, out, _ = pair
    assert len(out.attentions) == trace.config.n_layers == 6
    ours = trace.pattern_lhqk
    theirs = np.stack([a[0].numpy() for a in out.attentions])  # [l,1,h,q,k] -> [l,h,q,k]
    assert ours.shape == theirs.shape == (6, 12, trace.n_tokens, trace.n_tokens)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-5)


def test_hidden_states_equal_output_hidden_states(pair):
    trace, out, _ = pair
    theirs = np.stack([h[0].numpy() for h in out.hidden_states])
    assert trace.hidden_ltd.shape == theirs.shape == (7, trace.n_tokens, 384)
    np.testing.assert_allclose(trace.hidden_ltd, theirs, rtol=0, atol=1e-4)
    np.testing.assert_allclose(
        trace.hidden_ltd[-1], out.last_hidden_state[0].numpy(), rtol=0, atol=1e-4
    )


def test_q_k_v_equal_the_linear_outputs_per_head(pair):
    trace, _, captured = pair
    n_heads = trace.config.n_heads
    for layer in range(trace.config.n_layers):
        for ours, name in ((trace.q_lhqe, "query"), (trace.k_lhke, "key"), (trace.v_lhke, "value")):
            theirs = _heads(captured[layer, name], n_heads)
            np.testing.assert_allclose(ours[layer], theirs, rtol=0, atol=1e-5, err_msg=name)


def test_delta_and_head_deltas_equal_the_output_dense(model, pair):
    trace, _, captured = pair
    for layer in range(trace.config.n_layers):
        theirs = captured[layer, "dense"]
        np.testing.assert_allclose(trace.delta_ltd[layer], theirs, rtol=0, atol=1e-4)
        bias = model.weights[f"encoder.layer.{layer}.attention.output.dense.bias"]
        summed = trace.head_delta_lhtd[layer].sum(axis=0) + bias
        np.testing.assert_allclose(summed, theirs, rtol=0, atol=1e-4)


def test_attn_out_and_ffn_hidden_equal_their_modules(pair):
    trace, _, captured = pair
    for layer in range(trace.config.n_layers):
        np.testing.assert_allclose(
            trace.attn_out_ltd[layer], captured[layer, "attn_out"], rtol=0, atol=1e-4
        )
        np.testing.assert_allclose(
            trace.ffn_hidden_ltf[layer], captured[layer, "ffn_hidden"], rtol=0, atol=1e-4
        )


def test_scaled_scores_softmax_to_the_pattern(pair):
    trace, _, _ = pair
    assert trace.config.d_head == 32
    np.testing.assert_allclose(
        softmax(trace.scores_lhqk / np.sqrt(32)), trace.pattern_lhqk, rtol=0, atol=1e-6
    )
