"""A fourth family in one folder and one registry line (issue 33, item 2): GPT-2 from random
weights (``tests/families/gpt2``), picked by the registry, checked number for number against
transformers' own GPT-2 on the same weights and ids, and sized before its pass.

Tolerances (float32 NumPy against float32 torch): patterns and next-token probabilities within
1e-5 absolute; hidden states within 1e-5 absolute + 1e-5 relative (they reach |h| ≈ 16 after
two blocks of noisy weights; measured worst 1.1e-5 absolute, 7e-7 of the largest)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from attention_core.core.config import ModelLoadError
from attention_core.core.tokens import Tokens
from attention_core.core.whatif import WhatIf
from attention_core.models import (
    family_of,
    load_config,
    load_model,
    run_model,
    tokenize,
    trace_nbytes,
    trace_sentence,
)
from attention_core.models.bert import BERT
from attention_core.models.bert.model import default_model_path
from server.budget import nbytes
from tests.families.conftest import SENTENCE
from tests.families.gpt2 import GPT2
from tests.families.gpt2.forward import GPT2Trace, run_gpt2

PATTERN_ATOL = 1e-5
HIDDEN_ATOL = HIDDEN_RTOL = 1e-5


def test_load_model_picks_the_registered_family_by_its_claims(registered, gpt2_folder):
    path = str(gpt2_folder)
    assert GPT2.claims(path) and BERT.claims(path)  # BERT's catch-all takes any folder too
    model = load_model(path)
    assert family_of(model) is GPT2 and family_of(model.config) is GPT2


def test_every_registry_function_reaches_the_family(registered, gpt2_folder):
    path = str(gpt2_folder)
    model = load_model(path)
    assert load_config(path) == model.config
    tokens = tokenize(model, SENTENCE)
    trace = run_model(model, tokens)
    assert isinstance(trace, GPT2Trace) and family_of(trace) is GPT2
    again = trace_sentence(model, SENTENCE)
    np.testing.assert_array_equal(again.pattern_lhqk, trace.pattern_lhqk)
    assert trace_nbytes(model.config, len(tokens)) == GPT2.trace_nbytes(model.config, len(tokens))
    # and it takes nothing from the other families: their names and paths are not its
    assert not GPT2.claims("smollm2") and not GPT2.claims("model.gguf")
    assert not GPT2.claims(str(default_model_path()))  # MiniLM's folder: a BERT config.json
    assert family_of(load_config(str(default_model_path()))) is BERT


def test_the_config_is_the_common_one_filled_from_transformers_config(gpt2_model, hf_gpt2):
    cfg, hf = gpt2_model.config, hf_gpt2.config
    assert (cfg.n_layers, cfg.n_heads, cfg.d_model) == (hf.n_layer, hf.n_head, hf.n_embd)
    assert (cfg.d_head, cfg.d_ff) == (hf.n_embd // hf.n_head, 4 * hf.n_embd)
    assert (cfg.vocab_size, cfg.n_positions, cfg.max_tokens) == (100, 32, 32)
    assert cfg.layer_norm_eps == hf.layer_norm_epsilon
    assert (cfg.family, cfg.causal, cfg.positions, cfg.n_kv_heads) == ("gpt2", True, "learned", 4)
    assert cfg.has_lm_head and not cfg.has_sentence_embedding and not cfg.special_tokens
    assert cfg.attention_bias and not cfg.post_norm and not cfg.audio
    assert GPT2.offers.causal and GPT2.offers.next_token and not GPT2.offers.sentence_vector


def test_tokens_carry_their_character_spans_and_the_cut(gpt2_model):
    tokens = GPT2.tokenize(gpt2_model, SENTENCE, None)
    for piece, (start, end) in zip(tokens.tokens, tokens.offsets_t2.tolist(), strict=True):
        assert piece.removeprefix("▁") == SENTENCE[start:end]
    assert not tokens.special_t.any() and tokens.n_cut == 0
    assert 0 not in tokens.input_ids_t  # every word of SENTENCE is in the vocabulary
    cut = GPT2.tokenize(gpt2_model, SENTENCE, 5)
    assert len(cut) == 5 and cut.n_cut == len(tokens) - 5 and cut.tokens == tokens.tokens[:5]


def _transformers(hf, ids, attention_mask=None, knocked=()):
    """transformers' patterns [l,h,q,k], hidden states [l+1,t,d] and next-token probabilities
    [t,v]; ``knocked`` (layer, head) pairs have their z zeroed before c_proj by a hook."""
    e = hf.config.n_embd // hf.config.n_head
    hooks = []
    for layer, head in knocked:

        def zero(module, args, head=head):
            z = args[0].clone()
            z[..., head * e : (head + 1) * e] = 0
            return (z,)

        hooks.append(hf.transformer.h[layer].attn.c_proj.register_forward_pre_hook(zero))
    kwargs = {} if attention_mask is None else {"attention_mask": torch.tensor([attention_mask])}
    try:
        with torch.no_grad():
            out = hf(
                torch.tensor([ids]), output_attentions=True, output_hidden_states=True, **kwargs
            )
    finally:
        for hook in hooks:
            hook.remove()
    attentions = np.stack([a[0].numpy() for a in out.attentions])
    hidden = np.stack([h[0].numpy() for h in out.hidden_states])
    return attentions, hidden, torch.softmax(out.logits[0], dim=-1).numpy()


def _ids_tokens(ids) -> Tokens:
    n = len(ids)
    return Tokens(
        " ".join(map(str, ids)),
        tuple(map(str, ids)),
        np.asarray(ids, np.int64),
        np.zeros((n, 2), np.int64),
        np.zeros(n, bool),
        0,
    )


def _assert_matches(trace, attentions, hidden, probs):
    np.testing.assert_allclose(trace.pattern_lhqk, attentions, rtol=0, atol=PATTERN_ATOL)
    np.testing.assert_allclose(trace.hidden_ltd, hidden, rtol=HIDDEN_RTOL, atol=HIDDEN_ATOL)
    mine = np.stack([trace.next_probs_v(i) for i in range(trace.n_tokens)])
    np.testing.assert_allclose(mine, probs, rtol=0, atol=PATTERN_ATOL)


@pytest.mark.parametrize("n", [1, 2, 13, 32])
def test_patterns_and_hidden_states_equal_transformers(gpt2_model, hf_gpt2, n):
    rng = np.random.default_rng(n)
    for _ in range(3):
        ids = rng.integers(0, 100, n).tolist()
        trace = run_gpt2(gpt2_model, _ids_tokens(ids))
        # hidden_states[-1] is after ln_f in transformers: the trace's last row is too
        _assert_matches(trace, *_transformers(hf_gpt2, ids))
        np.testing.assert_array_equal(np.triu(trace.pattern_lhqk, k=1), 0)  # causal


def test_a_sentence_through_the_family_equals_transformers(gpt2_model, hf_gpt2):
    trace = GPT2.trace_sentence(gpt2_model, SENTENCE, WhatIf(causal=False), None)
    assert trace.whatif.causal  # a decoder's mask cannot be switched off
    _assert_matches(trace, *_transformers(hf_gpt2, trace.tokens.input_ids_t.tolist()))


def test_knocked_heads_equal_transformers_with_their_z_zeroed(gpt2_model, hf_gpt2):
    ids = np.random.default_rng(7).integers(0, 100, 12).tolist()
    knocked = ((0, 3), (1, 2))
    trace = run_gpt2(gpt2_model, _ids_tokens(ids), WhatIf(knocked=knocked))
    _assert_matches(trace, *_transformers(hf_gpt2, ids, knocked=knocked))
    assert not trace.z_lhqe[1, 2].any() and trace.pattern_lhqk[1, 2].any()  # pattern kept


def test_hidden_keys_equal_transformers_attention_mask(gpt2_model, hf_gpt2):
    ids = np.random.default_rng(8).integers(0, 100, 12).tolist()
    trace = run_gpt2(gpt2_model, _ids_tokens(ids), WhatIf(hidden=(3, 7)))
    mask = [0 if i in (3, 7) else 1 for i in range(12)]
    _assert_matches(trace, *_transformers(hf_gpt2, ids, attention_mask=mask))
    assert not trace.pattern_lhqk[..., [3, 7]].any()


@pytest.mark.parametrize("n", [1, 7, 32])
def test_trace_nbytes_is_exactly_what_the_trace_holds(registered, gpt2_model, n):
    """``trace_nbytes``'s docstring: "the most a trace that computes its layers on demand
    holds"; this trace keeps every layer, so it is equal, as the server counts it."""
    trace = run_gpt2(gpt2_model, _ids_tokens(list(range(n))))
    assert trace_nbytes(gpt2_model.config, n) == nbytes(trace)


def test_what_it_cannot_read_is_refused(gpt2_model, tmp_path: Path):
    with pytest.raises(ValueError, match="1 to 32"):
        run_gpt2(gpt2_model, _ids_tokens(list(range(33))))
    with pytest.raises(ValueError, match="out of range"):
        run_gpt2(gpt2_model, _ids_tokens([1, 2, 3]), WhatIf(hidden=(5,)))
    with pytest.raises(ValueError, match="cannot hide all"):
        run_gpt2(gpt2_model, _ids_tokens([1, 2]), WhatIf(hidden=(0, 1)))
    with pytest.raises(ValueError, match="outside"):
        run_gpt2(gpt2_model, _ids_tokens([1, 2, 3]), WhatIf(knocked=((2, 0),)))
    assert not GPT2.claims(str(tmp_path))  # no config.json
    with pytest.raises(ModelLoadError):
        GPT2.load(str(tmp_path))
