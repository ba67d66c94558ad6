"""The notes' ΔE₂ on a real decoder head (attention_core.lessons.notes_delta) against transformers'
LlamaForCausalLM on SmolLM2's GGUF file: the head's weights, its value vectors, its weighted sum
(the input of o_proj), that sum through the head's slice of W_O, the layer's attention output
(ΔE) and the stream it is added to (E₂), all read with hooks on the reference model."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("gguf")

from attention_core import output_bias, trace_sentence  # noqa: E402
from attention_core.lessons.notes_delta import note_weights, plumbing_delta  # noqa: E402
from attention_core.methods.decoder_heads import (  # noqa: E402
    NOTE_PHRASE,
    NOTE_TABLE_QK,
    note_tables,
    pick_head,
)
from tests.core.oracles import oracle  # noqa: E402


def reference_layer(layer: int) -> dict[str, np.ndarray]:
    """transformers' numbers for the phrase in ``layer``: the value projection's output, the
    input of o_proj (every head's z side by side), the attention's output (ΔE), the stream
    entering the layer, the pattern, and W_O."""
    ora = oracle("smollm2")
    block = ora.layers[layer].self_attn
    kept: dict[str, np.ndarray] = {}
    handles = [
        block.v_proj.register_forward_hook(lambda _m, _a, out: kept.update(v=out[0].numpy())),
        block.o_proj.register_forward_pre_hook(lambda _m, args: kept.update(z=args[0][0].numpy())),
        block.register_forward_hook(lambda _m, _a, out: kept.update(delta=out[0][0].numpy())),
    ]
    try:
        with torch.no_grad():
            out = ora.model(
                input_ids=torch.as_tensor([ora.ids(NOTE_PHRASE)]),
                output_attentions=True,
                output_hidden_states=True,
            )
    finally:
        for handle in handles:
            handle.remove()
    kept["pattern"] = out.attentions[layer][0].numpy()
    kept["hidden"] = out.hidden_states[layer][0].numpy()
    kept["w_o"] = block.o_proj.weight.detach().numpy()  # [d_model, heads · d_head]
    return kept


@pytest.fixture(scope="module")
def trace(smollm2):
    return trace_sentence(smollm2, NOTE_PHRASE)


@pytest.mark.parametrize("rule", ["closest", "adjective"])
def test_plumbing_delta_is_transformers_numbers(smollm2, trace, rule):
    pick = pick_head(note_tables(trace), rule)
    d = plumbing_delta(trace, output_bias(smollm2, pick.layer), pick.layer, pick.head)
    ref = reference_layer(pick.layer)
    ora = oracle("smollm2")
    e, last = ora.d_head, trace.n_tokens - 1
    assert len(ora.ids(NOTE_PHRASE)) == trace.n_tokens and d.tokens == trace.tokens.tokens
    np.testing.assert_allclose(d.weights_k, ref["pattern"][pick.head, last], atol=2e-5)
    kv = pick.head // (ora.n_heads // ora.n_kv_heads)  # the key/value head this head reads
    v_ke = ref["v"].reshape(trace.n_tokens, ora.n_kv_heads, e)[:, kv]
    scale = np.abs(v_ke).max()
    np.testing.assert_allclose(d.v_ke, v_ke, atol=2e-5 * scale)
    z_e = ref["z"][last, pick.head * e : (pick.head + 1) * e]  # what o_proj reads for this head
    np.testing.assert_allclose(d.z_e, z_e, atol=2e-5 * scale)
    proposal = ref["w_o"][:, pick.head * e : (pick.head + 1) * e] @ z_e
    np.testing.assert_allclose(d.head_delta_d, proposal, atol=1e-4 * np.abs(proposal).max())
    delta = ref["delta"][last]
    np.testing.assert_allclose(d.delta_d, delta, atol=1e-4 * np.abs(delta).max())
    hidden = ref["hidden"][last]
    np.testing.assert_allclose(d.hidden_d, hidden, atol=1e-5 * np.abs(hidden).max())
    np.testing.assert_allclose(d.updated_d, hidden + delta, atol=1e-5 * np.abs(hidden).max())
    # the notes' sizes: z has d_head numbers, E₂ and ΔE d_model; the heads' proposals sum to ΔE
    assert d.z_e.size == e < d.hidden_d.size == d.delta_d.size == ora.model.config.hidden_size
    assert d.head_norms_h.size == ora.n_heads and d.sum_error < 1e-5 * np.abs(delta).max()
    # the word table's "plumbing" row is the head's weights summed per word
    np.testing.assert_allclose(d.word_weights, note_tables(trace)[pick.layer, pick.head, 2])


def test_the_notes_weights_what_if(smollm2, trace):
    pick = pick_head(note_tables(trace), "closest")
    d = plumbing_delta(trace, output_bias(smollm2, pick.layer), pick.layer, pick.head)
    per_word = np.zeros(3)
    np.add.at(per_word, np.asarray(d.word_t), d.note_weights_k)
    np.testing.assert_allclose(per_word, NOTE_TABLE_QK[-1])  # 0.55, 0.4, 0.05
    np.testing.assert_allclose(d.z_note_e, d.note_weights_k @ d.v_ke)
    # "dirty" is two pieces: its 0.55 is split as the head splits its own weight
    dirty = np.asarray(d.word_t) == 0
    np.testing.assert_allclose(
        d.note_weights_k[dirty] / 0.55, d.weights_k[dirty] / d.weights_k[dirty].sum()
    )
    even = note_weights(np.array([0.0, 0.0, 1.0, 0.0]), (0, 0, 1, 2))
    np.testing.assert_allclose(even, [0.275, 0.275, 0.4, 0.05])  # nothing on "dirty": even split


def test_plumbing_delta_refuses_another_phrase(smollm2):
    with pytest.raises(ValueError, match="not"):
        plumbing_delta(trace_sentence(smollm2, "clean river water"), np.zeros(576), 0, 0)
