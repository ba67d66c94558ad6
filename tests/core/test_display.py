"""attention_core.core.display: the one naming of hidden states, one name per state of a real trace
(hidden_ltd[0] is the embedding, hidden_ltd[l + 1] what layer l puts out). A pre-norm decoder's
last state has also been through the model's final norm (transformers' ``hidden_states[-1]`` is
``last_hidden_state``): given the config, its name says so; a post-norm encoder's last state is
its last layer's own output and is named by that layer alone."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import load_config, tokenize, trace_sentence
from attention_core.core.display import state_name
from viz.embedding_shift import layer_name

TEXT = "The river bank was muddy"


def test_each_state_is_named_for_the_layer_that_made_it(model):
    trace = trace_sentence(model, TEXT)
    names = [state_name(s) for s in range(trace.hidden_ltd.shape[0])]
    assert names[0] == "embedding" and names[-1] == f"after layer {trace.config.n_layers - 1}"
    assert names[1:] == [f"after layer {layer}" for layer in range(trace.config.n_layers)]


def test_the_figures_use_the_engine_s_names():
    assert layer_name is state_name
    with pytest.raises(ValueError, match="negative"):
        state_name(-1)


def test_smollm2_s_last_state_says_the_final_rmsnorm_minilm_s_its_layer(model, smollm2):
    cfg = smollm2.config
    names = [state_name(s, cfg) for s in range(cfg.n_layers + 1)]
    assert names[0] == "embedding" and names[1] == "after layer 0"
    assert names[-2] == "after layer 28"
    assert names[-1] == "after layer 29 and the final RMSNorm"
    minilm = trace_sentence(model, TEXT).config
    assert [state_name(s, minilm) for s in range(7)] == [state_name(s) for s in range(7)]
    assert state_name(6, minilm) == "after layer 5"
    with pytest.raises(ValueError, match="past"):
        state_name(cfg.n_layers + 1, cfg)


def test_whisper_s_decoder_ends_in_its_final_layernorm():
    """tests/core/test_whisper_exact.py checks the state itself against transformers'
    ``decoder_hidden_states[-1]`` (after ``decoder.layer_norm``)."""
    cfg = load_config("whisper")
    want = f"after layer {cfg.n_layers - 1} and the final LayerNorm"
    assert state_name(cfg.n_layers, cfg) == want


@pytest.fixture(scope="module")
def smollm2_reference():
    """transformers' LlamaForCausalLM on the same GGUF, hooked (tests/core/oracles.py)."""
    pytest.importorskip("torch")
    from tests.core.oracles import llama_oracle, run_reference

    loaded = llama_oracle()
    return loaded, run_reference(loaded, loaded.ids(TEXT))


def test_smollm2_s_last_state_is_after_the_final_norm_as_transformers_gives_it(
    smollm2, smollm2_reference
):
    import torch

    loaded, ref = smollm2_reference
    ours = trace_sentence(smollm2, TEXT).hidden_ltd
    assert tokenize(smollm2, TEXT).input_ids_t.tolist() == loaded.ids(TEXT)
    last_block_td = ref.block_out_ltd[-1]  # layer 29's own output, before the final norm
    with torch.no_grad():
        normed_td = loaded.model.model.norm(torch.from_numpy(last_block_td.copy())).numpy()
    scale = np.abs(ref.hidden_ltd[-1]).max()
    assert np.abs(ref.hidden_ltd[-1] - normed_td).max() <= 1e-6 * scale  # transformers' own
    assert np.abs(ours[-1] - ref.hidden_ltd[-1]).max() <= 1e-4 * scale
    assert np.abs(ours[-1] - last_block_td).max() > 0.5 * scale  # the norm changes it: not equal
    # the states before the last are each layer's own output, as their names say
    inner = np.abs(ours[1:-1] - ref.block_out_ltd[:-1]).max(axis=(1, 2))
    assert (inner <= 1e-4 * np.abs(ref.block_out_ltd[:-1]).max(axis=(1, 2))).all()


def test_minilm_s_last_state_is_its_last_layer_s_output(model):
    """Post-norm: BERT's last state is layer 5's own output (no norm after the stack)."""
    pytest.importorskip("torch")
    from tests.core.oracles import bert_oracle, run_reference

    loaded = bert_oracle(str(model.path))
    ref = run_reference(loaded, loaded.ids(TEXT))
    ours = trace_sentence(model, TEXT).hidden_ltd
    assert np.abs(ref.hidden_ltd[-1] - ref.block_out_ltd[-1]).max() == 0
    assert np.abs(ours[-1] - ref.block_out_ltd[-1]).max() <= 1e-4
