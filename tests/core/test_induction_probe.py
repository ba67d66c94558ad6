"""The induction probe (random tokens read twice) against transformers and TransformerLens.

The oracles: transformers' LlamaForCausalLM from SmolLM2's GGUF and BertModel on MiniLM's folder
(tests/core/oracles.py), run on the probe's own ids; the per-token loss is torch's cross-entropy
of transformers' logits, the induction scores TransformerLens's ``head_detector`` (error measure
"mul", nothing excluded) on transformers' attentions, and the knock-out transformers' model with
a pre-hook zeroing the knocked heads' slices before ``o_proj`` (as test_head_knockout.py does).

Measured here at n=50, seed 0 on SmolLM2: mean loss 14.55 nats on the first copy (random tokens:
nothing to go on), 3.88 on the second; with the top 5 induction heads knocked out ((18, 6),
(17, 3), (17, 4), (17, 5), (18, 7)) the second copy's loss rises to 11.67. Our loss equals the
reference's to 3e-5 nats (intact and knocked out).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
hd = pytest.importorskip("transformer_lens.head_detector")

from attention_core.methods.induction import (  # noqa: E402
    LOW_ID,
    N_KNOCK,
    knock_probe,
    probe_ids,
    run_probe,
)
from tests.core.oracles import oracle, run_reference  # noqa: E402

LOSS_TOL = 1e-4  # nats; measured 3e-5
TOL = 1e-5  # induction scores


def tl_induction_lh(pattern_lhqk: np.ndarray, ids: list[int]) -> np.ndarray:
    """TransformerLens's induction score of every head [L, H]."""
    detection = hd.get_induction_head_detection_pattern(torch.as_tensor([ids]))
    pattern = torch.from_numpy(np.array(pattern_lhqk, dtype=np.float32))
    return np.array(
        [
            [
                hd.compute_head_attention_similarity_score(
                    pattern_hqk,
                    detection_pattern=detection,
                    exclude_bos=False,
                    exclude_current_token=False,
                    error_measure="mul",
                )
                for pattern_hqk in layer
            ]
            for layer in pattern
        ]
    )


def transformers_run(key: str, ids: list[int]) -> tuple[np.ndarray, np.ndarray | None]:
    """transformers' attentions [L, H, q, k] and (a decoder) its per-token cross-entropy [t]:
    −log p(token t | tokens before it), NaN at 0."""
    with torch.no_grad():
        out = oracle(key).model(input_ids=torch.as_tensor([ids]), output_attentions=True)
    pattern = np.stack([a[0].numpy() for a in out.attentions])
    if key != "smollm2":
        return pattern, None
    loss = torch.nn.functional.cross_entropy(
        out.logits[0, :-1].double(), torch.as_tensor(ids[1:]), reduction="none"
    )
    return pattern, np.concatenate([[np.nan], loss.numpy()])


@pytest.fixture(scope="module")
def probe(smollm2):
    return run_probe(smollm2, 50, 0)


@pytest.fixture(scope="module")
def theirs(probe):
    return transformers_run("smollm2", probe.trace.tokens.input_ids_t.tolist())


def test_the_probe_ids_are_seeded_and_repeat_exactly(smollm2, probe):
    vocab = smollm2.config.vocab_size
    ids = probe_ids(vocab, 50, 0)
    assert ids.shape == (100,)
    assert (ids[:50] == ids[50:]).all()
    assert ((ids >= LOW_ID) & (ids < vocab)).all()
    assert (probe_ids(vocab, 50, 0) == ids).all()  # the same seed, the same tokens
    assert (probe.ids == ids).all() and probe.n == 50 and probe.start == 0
    assert (probe_ids(vocab, 50, 1)[:50] != ids[:50]).any()
    assert len(set(ids[:50].tolist())) > 45  # random ordinary tokens, hardly a repeat inside
    for bad in (1, 1001):
        with pytest.raises(ValueError, match="probe's length"):
            probe_ids(vocab, bad, 0)


def test_the_probe_is_the_bare_ids_on_the_decoder(probe):
    """SmolLM2's tokenizer adds nothing to a text: the pass is the probe's ids alone."""
    assert oracle("smollm2").ids("x") == oracle("smollm2").tokenizer("x")["input_ids"]
    assert probe.trace.tokens.input_ids_t.tolist() == probe.ids.tolist()


def test_the_loss_equals_transformers_cross_entropy(probe, theirs):
    _, loss = theirs
    assert probe.loss is not None and probe.loss.shape == (100,)
    assert np.isnan(probe.loss[0]) and not np.isnan(probe.loss[1:]).any()
    np.testing.assert_allclose(probe.loss, loss, rtol=0, atol=LOSS_TOL, equal_nan=True)


def test_the_induction_scores_equal_transformer_lens(probe, theirs):
    pattern, _ = theirs
    ref = tl_induction_lh(pattern, probe.ids.tolist())
    np.testing.assert_allclose(probe.induction_lh, ref, rtol=0, atol=TOL)
    order = np.argsort(-ref, axis=None)
    gaps = -np.diff(np.sort(ref, axis=None)[::-1])[:N_KNOCK]
    if (gaps > TOL).all():  # the top heads are the reference's top heads, in order
        assert probe.top_heads() == tuple(divmod(int(i), ref.shape[1]) for i in order[:N_KNOCK])
    assert ref.max() > 0.3  # SmolLM2 has induction heads: 0.43 at (18, 6)


def test_the_second_copy_is_read_off_the_first(probe, theirs):
    _, loss = theirs
    first, second = probe.mean_loss()
    assert first == pytest.approx(np.nanmean(loss[:50]), abs=LOSS_TOL)
    assert second == pytest.approx(np.mean(loss[50:]), abs=LOSS_TOL)
    assert first > 10 and second < first - 8  # measured 14.55 and 3.88 nats


def test_knocking_out_the_top_induction_heads_matches_transformers(smollm2, probe):
    knocked = knock_probe(smollm2, probe)
    assert knocked.heads == probe.top_heads(N_KNOCK) and len(knocked.heads) == N_KNOCK
    ids = probe.ids.tolist()
    ref = run_reference(oracle("smollm2"), ids, knocked.heads)
    p_t = ref.probs_tv[np.arange(len(ids) - 1), ids[1:]]
    ref_loss = np.concatenate([[np.nan], -np.log(p_t)])  # float64 softmax of their logits
    np.testing.assert_allclose(knocked.loss, ref_loss, rtol=0, atol=LOSS_TOL, equal_nan=True)
    intact, without = knocked.second_copy()
    assert intact == pytest.approx(probe.mean_loss()[1])
    assert without > intact + 2  # measured 3.88 -> 11.67 nats
    assert np.mean(ref_loss[50:]) > intact + 2


def test_the_encoder_probe_has_induction_scores_and_no_loss(model):
    probe = run_probe(model, 50, 0)
    tok = oracle("minilm").tokenizer
    ids = probe.trace.tokens.input_ids_t.tolist()
    assert ids == [tok.cls_token_id, *probe.ids.tolist(), tok.sep_token_id]
    assert probe.start == 1 and probe.loss is None
    pattern, _ = transformers_run("minilm", ids)
    np.testing.assert_allclose(probe.induction_lh, tl_induction_lh(pattern, ids), atol=TOL)
    with pytest.raises(ValueError, match="no next token"):
        probe.mean_loss()
    with pytest.raises(ValueError, match="no next token"):
        knock_probe(model, probe)
