"""attention_core.lessons.demos, the guided tour's arithmetic, against the trace, transformers and
torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attention_core import cosine, trace_sentence
from attention_core.lessons.demos import (
    crossover_tokens,
    drift,
    layer_flops,
    measure_split,
    padding_demo,
    parting,
    query_from_weights,
    repeated_word,
    shift_gap,
    special_share,
    weight_counts,
)
from attention_core.lessons.saturation import (
    dot_spread,
    jacobian_norms,
    random_scale_effect,
    scale_effect,
    softmax_jacobian,
)

SENTENCE = "the cat saw the dog near the bank"  # "the" at 1, 4 and 7
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def trace(model):
    return trace_sentence(model, SENTENCE)


@pytest.fixture(scope="module")
def hf_model(model):
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("torch")
    return transformers.AutoModel.from_pretrained(
        str(model.path), attn_implementation="eager"
    ).eval()


def test_the_module_imports_no_ui_library():
    code = (
        "import sys, attention_core.lessons.demos; "
        "print([m for m in ('streamlit', 'plotly', 'torch') if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(("layer", "head", "token"), [(0, 0, 1), (2, 5, 8), (5, 11, 0)])
def test_query_recomputed_matches_the_trace_and_transformers(
    model, trace, hf_model, layer, head, token
):
    torch = pytest.importorskip("torch")
    rec = query_from_weights(model, layer, head, trace.hidden_ltd[layer, token])
    np.testing.assert_allclose(rec.q_e, trace.q_lhqe[layer, head, token], atol=1e-5)
    query = hf_model.encoder.layer[layer].attention.self.query
    with torch.no_grad():
        hf_q = query(torch.from_numpy(trace.hidden_ltd[layer, token].copy())).numpy()
    np.testing.assert_allclose(rec.q_e, hf_q[head * 32 : (head + 1) * 32], atol=1e-5)
    by_hand = sum(rec.x_d[d] * float(rec.w_de[d, 0]) for d in range(384)) + rec.b_e[0]
    assert by_hand == pytest.approx(float(rec.q_e[0]), abs=1e-4)
    with pytest.raises(ValueError, match="shape"):
        query_from_weights(model, layer, head, trace.hidden_ltd[layer])


def test_repeated_word(model, trace):
    found = repeated_word(trace)
    assert (found.first, found.second) == (1, 4)
    assert found.static_cos == pytest.approx(1.0)
    assert found.context_cos == pytest.approx(
        float(cosine(trace.hidden_ltd[-1, 1], trace.hidden_ltd[-1, 4]))
    )
    assert found.context_cos < 0.999
    assert repeated_word(trace_sentence(model, "Jane visits Africa")) is None


def test_padding_demo_against_transformers_attention_mask(model, trace, hf_model):
    torch = pytest.importorskip("torch")
    pad = padding_demo(model, trace, 3)
    n = trace.n_tokens
    assert pad.free_hqk.shape == (12, n + 3, n + 3) and pad.n_real == n
    ids = np.concatenate([trace.tokens.input_ids_t, [0, 0, 0]])
    assert model.tokenizer.token_to_id("[PAD]") == 0
    for mask, ours in ((np.ones(n + 3), pad.free_hqk), ((np.arange(n + 3) < n), pad.masked_hqk)):
        with torch.no_grad():
            out = hf_model(
                input_ids=torch.from_numpy(ids)[None],
                attention_mask=torch.from_numpy(mask.astype(np.int64))[None],
                output_attentions=True,
            )
        np.testing.assert_allclose(ours, out.attentions[0][0].numpy(), atol=1e-5)
    assert np.all(pad.masked_leak_hq == 0) and np.all(pad.leak_hq > 0)
    np.testing.assert_allclose(pad.leak_hq, pad.free_hqk[:, :n, n:].sum(-1))
    assert pad.gap < 1e-5


def test_softmax_jacobian_against_torch_autograd():
    torch = pytest.importorskip("torch")
    x = torch.tensor([2.0, -1.0, 0.5, 3.0], dtype=torch.float64)
    expected = torch.autograd.functional.jacobian(lambda t: torch.softmax(t, 0), x).numpy()
    got = softmax_jacobian(torch.softmax(x, 0).numpy())
    np.testing.assert_allclose(got, expected, atol=1e-12)
    assert np.linalg.norm(softmax_jacobian(np.array([1.0, 0.0, 0.0]))) == 0


def test_scale_effect_on_a_real_head(trace):
    scores = trace.scores_lhqk[2, 5]
    eff = scale_effect(scores, 32)
    assert eff.spread_raw == pytest.approx(eff.spread_scaled * np.sqrt(32), rel=1e-6)
    assert eff.spread_raw == pytest.approx(float(scores.astype(np.float64).std(-1).mean()), 1e-6)
    assert eff.top_raw > eff.top_scaled  # unscaled rows lean on fewer keys
    np.testing.assert_allclose(eff.top_scaled, trace.pattern_lhqk[2, 5].max(-1).mean(), 1e-5)
    assert eff.grad_raw < eff.grad_scaled  # and pass less gradient back


def test_jacobian_norms_without_building_the_jacobian():
    rng = np.random.default_rng(1)
    rows = rng.random((6, 9))
    rows /= rows.sum(-1, keepdims=True)
    rows[0] = np.eye(9)[2]  # saturated: no gradient at all
    expected = [np.linalg.norm(softmax_jacobian(r)) for r in rows]
    np.testing.assert_allclose(jacobian_norms(rows), expected, atol=1e-12)
    assert jacobian_norms(rows)[0] == 0


def test_random_heads_saturate_without_the_division(model, trace):
    from attention_core.lessons.saturation import random_scores, saturation_curve

    x = trace.hidden_ltd[0]
    eff = random_scale_effect(x, 384)
    one = [scale_effect(random_scores(x, 384, seed), 384) for seed in range(8)]
    assert eff.grad_raw == pytest.approx(np.mean([e.grad_raw for e in one]), rel=1e-12)
    curve = saturation_curve(x, d_ks=(384,))  # the same heads as the tour's chart
    assert eff.top_raw == pytest.approx(curve.max_unscaled[0], rel=1e-9)
    assert eff.top_scaled == pytest.approx(curve.max_scaled[0], rel=1e-9)
    assert eff.top_raw > 0.9 and eff.grad_raw < eff.grad_scaled / 3
    assert 0.5 < eff.spread_scaled < 1.5 < eff.spread_raw


def test_parting_of_the_two_banks(model):
    a = trace_sentence(model, "The river bank was muddy")
    b = trace_sentence(model, "I made a deposit at the bank")
    cut = parting(a, 3, b, 7)
    assert cut.cos_s.shape == (8,)
    assert cut.cos_s[0] == pytest.approx(1.0)  # one lookup row
    assert cut.cos_s[1] == pytest.approx(float(cosine(a.hidden_ltd[0, 3], b.hidden_ltd[0, 7])))
    assert cut.cos_s[-1] == pytest.approx(float(cosine(a.hidden_ltd[-1, 3], b.hidden_ltd[-1, 7])))
    np.testing.assert_allclose(cut.drop_l, cut.cos_s[1:-1] - cut.cos_s[2:])
    assert cut.largest_drop == int(np.argmax(cut.drop_l))


def test_dot_product_spread_grows_like_root_dk():
    d_ks = (1, 32, 384)
    means, stds = dot_spread(d_ks)
    np.testing.assert_allclose(stds, np.sqrt(d_ks), rtol=0.05)
    assert np.all(np.abs(means) < 0.1 * stds)  # the size stays near 0: only the spread grows


def test_softmax_ignores_a_constant_shift():
    row = np.array([1.5, -0.3, 2.2, 0.0])
    assert shift_gap(row, 100.0) < 1e-12
    assert shift_gap(row, -row.max()) < 1e-12


def test_special_share_against_the_pattern(trace):
    share = special_share(trace, 2)
    assert share.shape == (12,)
    # Rows sum to 1, so the weight on [CLS]/[SEP] is what the real tokens' columns leave over.
    p = trace.pattern_lhqk[2, :, 1:-1].astype(np.float64)  # the real tokens' rows
    np.testing.assert_allclose(share, 1 - p[..., 1:-1].sum(-1).mean(-1), rtol=1e-5)


def test_drift_per_block(trace):
    d = drift(trace, 8)
    assert d.step_cos_l.shape == (6,) and d.static_cos_s.shape == (7,)
    h = trace.hidden_ltd[:, 8]
    assert d.step_cos_l[0] == pytest.approx(float(cosine(h[0], h[1])))
    assert d.static_cos_s[-1] == pytest.approx(float(cosine(trace.word_td[8], h[-1])))


def test_cost_split(model):
    assert crossover_tokens(model.config) == 2 * 384 + 1536 == 2304
    attention, dense = layer_flops(model.config, 2304)
    assert attention == dense
    assert layer_flops(model.config, 512)[0] < layer_flops(model.config, 512)[1]
    points = measure_split(model, (16, 64), repeats=1)
    assert [p.n_tokens for p in points] == [16, 64]
    assert all(p.attention_s > 0 and p.dense_s > 0 and 0 < p.attention_share < 1 for p in points)


def test_weight_counts_against_transformers(model, hf_model):
    for layer in range(model.config.n_layers):
        block = hf_model.encoder.layer[layer]
        parts = (block.attention.self, block.attention.output.dense)
        attention = sum(p.numel() for part in parts for p in part.parameters())
        dense = sum(
            p.numel()
            for part in (block.intermediate.dense, block.output.dense)
            for p in part.parameters()
        )
        assert weight_counts(model.params.layer(layer)) == (attention, dense)
    attention, dense = weight_counts(model.params.layer(0))
    assert 1.9 < dense / attention < 2.1  # the feed-forward holds about twice attention's
