"""The logit lens (SmolLM2) against transformers' own modules.

The reference reads each decoder layer's output with a forward hook (the residual after block l),
applies transformers' final RMSNorm (``model.model.norm``) and LM head, and takes a float64
softmax. ``output_hidden_states`` gives the same states, except that its last one is already
final-normed: checked here, as the engine's lens relies on it.
"""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import trace_sentence
from attention_core.methods.logit_lens import logit_lens
from tests.core.oracles import (
    SENTENCES,
    cli_npz,
    lens_top,
    oracle,
    reference,
    settled,
    torch,
)

K = 5


@pytest.fixture(scope="module", params=list(SENTENCES))
def pair(request, smollm2):
    """(our trace, its lens, transformers' hooked run, the reference lens's top K + 1)."""
    text = SENTENCES[request.param]
    ref = reference("smollm2", text)
    trace = trace_sentence(smollm2, text)
    return trace, logit_lens(trace, k=K), ref, lens_top(oracle("smollm2"), ref, K + 1)


def test_output_hidden_states_are_the_block_outputs_the_last_one_final_normed(pair):
    ref = pair[2]
    np.testing.assert_array_equal(ref.hidden_ltd[1:-1], ref.block_out_ltd[:-1])
    model = oracle("smollm2").model
    with torch.no_grad():
        normed = model.model.norm(torch.from_numpy(ref.block_out_ltd[-1].copy()))
    np.testing.assert_array_equal(ref.hidden_ltd[-1], normed.numpy())
    assert not np.allclose(ref.hidden_ltd[-1], ref.block_out_ltd[-1], atol=1e-2)


def test_lens_equals_the_reference_where_the_ranks_are_clear(pair):
    trace, lens, _, (ids_ltk, probs_ltk) = pair
    n_layers, t = trace.config.n_layers, trace.n_tokens
    assert lens.top_ids_lpk.shape == lens.top_probs_lpk.shape == (n_layers, t, K)
    assert lens.positions_p.tolist() == list(range(t))
    sure = settled(probs_ltk)
    assert sure[..., 0].mean() > 0.9  # most top-1 tokens are well clear of the second
    assert (lens.top_ids_lpk[sure] == ids_ltk[..., :K][sure]).all()
    assert np.abs(lens.top_probs_lpk - probs_ltk[..., :K]).max() <= 1e-4


def test_the_last_row_is_the_models_own_prediction(pair):
    trace, lens, ref, _ = pair
    np.testing.assert_array_equal(lens.top_ids_lpk[-1], trace.next_top_ids_tk[:, :K])
    np.testing.assert_allclose(lens.top_probs_lpk[-1], trace.next_top_probs_tk[:, :K], atol=1e-6)
    theirs = np.take_along_axis(ref.probs_tv, lens.top_ids_lpk[-1], axis=-1)
    assert np.abs(lens.top_probs_lpk[-1] - theirs).max() <= 1e-4


def test_chosen_positions_are_those_rows_of_the_whole_lens(smollm2):
    trace = trace_sentence(smollm2, SENTENCES["repeated"])
    whole = logit_lens(trace, k=3)
    some = logit_lens(trace, positions=[7, 0, 12], k=3)
    assert some.positions_p.tolist() == [7, 0, 12]
    np.testing.assert_array_equal(some.top_ids_lpk, whole.top_ids_lpk[:, [7, 0, 12]])
    np.testing.assert_allclose(some.top_probs_lpk, whole.top_probs_lpk[:, [7, 0, 12]], atol=1e-7)
    for bad in ([13], [-1], []):
        with pytest.raises(ValueError):
            logit_lens(trace, positions=bad)


def test_an_encoder_has_no_lens(model):
    with pytest.raises(ValueError):
        logit_lens(trace_sentence(model, SENTENCES["short"]))


def test_the_npz_export_holds_the_lens_top_token(smollm2):
    text = SENTENCES["punctuation"]
    npz = cli_npz("smollm2", text)
    ids_ltk, probs_ltk = lens_top(oracle("smollm2"), reference("smollm2", text), 2)
    n_layers, t = smollm2.config.n_layers, len(npz["tokens"])
    assert npz["lens_top_ids"].shape == npz["lens_top_probs"].shape == (n_layers, t) == (30, t)
    sure = settled(probs_ltk)[..., 0]
    assert (npz["lens_top_ids"][sure] == ids_ltk[..., 0][sure]).all()
    assert np.abs(npz["lens_top_probs"] - probs_ltk[..., 0]).max() <= 1e-4
    np.testing.assert_array_equal(npz["lens_top_ids"][-1], npz["next_top_ids"][:, 0])
