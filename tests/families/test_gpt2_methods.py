"""The engine's own methods, unchanged, on the GPT-2 test family's trace (issue 33, item 2): each
runs, and its numbers are checked against the trace itself, a rerun or transformers. Each also
runs on a view of the trace that lets through only what the interface declares (``Trace``, and
``NextTokenTrace`` for a model with an LM head): a method that reads past the interface fails
there, with the name it read."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import attention_core.core.family as family
from attention_core.core.whatif import WhatIf
from attention_core.methods import (
    decoder_heads,
    export,
    hide_word,
    knockout,
    logit_lens,
    norm_weighted,
    pack,
    rollout,
    telling,
    values,
    weight_effect,
)
from attention_core.models import trace_sentence
from tests.families.conftest import SENTENCE

pytestmark = pytest.mark.usefixtures("registered")


@pytest.fixture(scope="module")
def trace(registered, gpt2_model):
    return trace_sentence(gpt2_model, SENTENCE)


class InterfaceOnly:
    """``trace`` through the interface alone: any other attribute is an AttributeError."""

    def __init__(self, trace) -> None:
        allowed = _declared(family.Trace)
        if trace.config.has_lm_head and hasattr(family, "NextTokenTrace"):
            allowed |= _declared(family.NextTokenTrace)
        object.__setattr__(self, "_trace", trace)
        object.__setattr__(self, "_allowed", allowed)

    def __getattr__(self, name: str):
        if name not in self._allowed:
            raise AttributeError(f"{name!r} is not declared by attention_core.core.family")
        return getattr(self._trace, name)


def _declared(protocol: type) -> set[str]:
    return {n for cls in protocol.__mro__ for n in vars(cls) if not n.startswith("_")}


def _block(part: pack.Part):
    return lambda m, t, h: pack.layer_block(t, 1, part)


METHODS = {
    "rollout.trace_rollout": lambda m, t, h: rollout.trace_rollout(t),
    "norm_weighted.norm_weighted_lhqk": lambda m, t, h: norm_weighted.norm_weighted_lhqk(t),
    "pack.header": lambda m, t, h: pack.header(t),
    **{f"pack.layer_block[{part}]": _block(part) for part in pack.PARTS},
    "export.trace_arrays": lambda m, t, h: export.trace_arrays(t),
    "knockout.knock_out": lambda m, t, h: knockout.knock_out(m, t, [(0, 1)]),
    "knockout.vector_change": lambda m, t, h: knockout.vector_change(t, t, 3),
    "knockout.prediction_change": lambda m, t, h: knockout.prediction_change(t, t, 3),
    "knockout.head_importance": lambda m, t, h: knockout.head_importance(m, t, 3),
    "values.value_update": lambda m, t, h: values.value_update(
        t, values.output_bias(m, 1), 1, 2, 3
    ),
    "telling.telling_head": lambda m, t, h: telling.telling_head(t),
    "weight_effect.largest_gap": lambda m, t, h: weight_effect.largest_gap(t),
    "logit_lens.logit_lens": lambda m, t, h: logit_lens.logit_lens(t),
    "hide_word.compare_passes": lambda m, t, h: hide_word.compare_passes(t, h, 3),
    "decoder_heads.note_tables": lambda m, t, h: decoder_heads.note_tables(
        InterfaceOnly(trace_sentence(m, "dirty quantum plumbing"))
    ),
}


@pytest.mark.parametrize("name", list(METHODS))
def test_each_method_reads_only_what_the_interface_declares(gpt2_model, trace, name):
    without_word = trace_sentence(gpt2_model, SENTENCE, WhatIf(hidden=(1,)))
    METHODS[name](gpt2_model, InterfaceOnly(trace), InterfaceOnly(without_word))


def test_rollout_rows_sum_to_one_and_stay_causal(trace):
    r_lqk = rollout.trace_rollout(trace)
    assert r_lqk.shape == (2, trace.n_tokens, trace.n_tokens)
    np.testing.assert_allclose(r_lqk.sum(axis=-1), 1.0, atol=1e-5)
    assert (r_lqk >= 0).all() and not np.triu(r_lqk, k=1).any()


def test_norm_weighted_is_each_weight_times_its_value_vectors_length(trace):
    got = norm_weighted.norm_weighted_lhqk(trace)
    v_lhke, w_o_lhed = trace.v_lhke.astype(np.float64), trace.w_o_lhed.astype(np.float64)
    lengths_lhk = np.linalg.norm(np.einsum("lhke,lhed->lhkd", v_lhke, w_o_lhed), axis=-1)
    np.testing.assert_allclose(got, trace.pattern_lhqk * lengths_lhk[:, :, None, :], rtol=1e-4)
    assert not np.triu(got, k=1).any()


def test_pack_describes_a_causal_sentence_without_specials(trace):
    head = pack.header(trace)
    n = trace.n_tokens
    assert head["tokens"] == list(trace.tokens.tokens) and head["n_tokens"] == n
    assert head["causal"] and head["n_kv_heads"] == head["n_heads"] == 4
    assert head["special"] == [False] * n and head["kept_hiding_special"] == list(range(n))
    for part in (part for part in pack.PARTS if part != "roles"):  # roles: JSON, any size
        block = pack.layer_block(trace, 1, part)
        assert len(block.data) == pack.block_nbytes(n, 4, 16, part), part


def test_export_holds_the_trace_and_the_lens(trace):
    arrays = export.trace_arrays(trace)
    np.testing.assert_array_equal(arrays["pattern"], trace.pattern_lhqk)
    np.testing.assert_array_equal(arrays["hidden"], trace.hidden_ltd)
    np.testing.assert_array_equal(arrays["next_top_ids"], trace.next_top_ids_tk)
    np.testing.assert_array_equal(arrays["lens_top_ids"][-1], trace.next_top_ids_tk[:, 0])
    assert "sentence_embedding" not in arrays


def test_head_importance_equals_knocking_each_head_out_and_rerunning(gpt2_model, trace):
    position = 5
    got = knockout.head_importance(gpt2_model, trace, position)
    top_id, top_p = trace.next_top_ids_tk[position, 0], trace.next_top_probs_tk[position, 0]
    for layer in range(2):
        for head in range(4):
            knocked = knockout.knock_out(gpt2_model, trace, [(layer, head)])
            assert knocked.whatif.knocked == ((layer, head),)
            drop = top_p - knocked.next_probs_v(position)[top_id]
            assert got.effect_lh[layer, head] == pytest.approx(drop, abs=1e-6)
    assert got.measure.startswith("drop in the probability")


def test_a_knock_out_changes_nothing_before_the_layer(gpt2_model, trace):
    knocked = knockout.knock_out(gpt2_model, trace, [(1, 0)])
    change = knockout.vector_change(trace, knocked, 4)
    assert change.cosine_l[:2] == pytest.approx(1.0) and change.cosine_l[2] < 1.0
    assert change.sentence_cosine is None
    moved = knockout.prediction_change(trace, knocked, 4)
    assert moved.before_probs.sum() <= 1.0 + 1e-6 and moved.lost[0] >= moved.lost[1]


def test_logit_lens_equals_transformers_ln_f_and_lm_head(trace, hf_gpt2):
    lens = logit_lens.logit_lens(trace, k=5)
    with torch.no_grad():
        out = hf_gpt2(torch.tensor(trace.tokens.input_ids_t[None]), output_hidden_states=True)
        first = hf_gpt2.lm_head(hf_gpt2.transformer.ln_f(out.hidden_states[1]))[0]
    for layer, logits in enumerate((first, out.logits[0])):
        want = torch.topk(torch.softmax(logits, -1), 5)
        np.testing.assert_array_equal(lens.top_ids_lpk[layer], want.indices.numpy())
        np.testing.assert_allclose(lens.top_probs_lpk[layer], want.values.numpy(), atol=1e-5)


def test_value_update_adds_up_to_the_passes_delta(gpt2_model, trace):
    bias = values.output_bias(gpt2_model, 0)
    np.testing.assert_array_equal(bias, gpt2_model.params.layers[0].b_o_d)
    update = values.value_update(trace, bias, 0, 2, 6)
    assert update.sum_error < 1e-5 and update.normed_d is None  # pre-norm: no middle LayerNorm
    np.testing.assert_allclose(update.updated_d + update.ffn_out_d, update.next_d, atol=1e-5)
    assert update.weights_k[7:].sum() == 0  # token 6 sees only tokens 0..6


def test_causality_shows_in_hiding_a_word(gpt2_model):
    words = trace_sentence(gpt2_model, "the cat sat on the river bank")
    effect = hide_word.hide_word(gpt2_model, words.tokens.text, [3], 1)  # hide "on", watch "cat"
    np.testing.assert_allclose(effect.cosine_l, 1.0, atol=1e-6)  # "cat" never sees "on"
    later = hide_word.hide_word(gpt2_model, words.tokens.text, [3], 6)  # watch "bank"
    assert later.cosine_l[0] == pytest.approx(1.0) and later.cosine_l[-1] < 1.0
    assert later.sentence_cosine is None


def test_the_head_picking_methods_give_weights_of_the_pattern(gpt2_model, trace):
    gap = weight_effect.largest_gap(trace)
    assert 0 <= gap.moved_share <= 1 and 0 <= gap.weight_share <= 1
    told = telling.telling_head(trace)
    assert told is not None and told.key <= told.query and told.key != 0  # causal; not the sink
    assert told.weight == trace.pattern_lhqk[told.layer, told.head, told.query, told.key]
    tables = decoder_heads.note_tables(trace_sentence(gpt2_model, "dirty quantum plumbing"))
    assert tables.shape == (2, 4, 3, 3) and not np.triu(tables, k=1).any()
    np.testing.assert_allclose(tables.sum(axis=-1), 1.0, atol=1e-5)
