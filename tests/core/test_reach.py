"""Sink share and reach (attention_core.methods.reach): exact small patterns worked by hand, a
plain-loop reference on random causal patterns, and SmolLM2 on a ~600-token text against the
same measures read from transformers' eager attentions (hooked on a few layers)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core import trace_sentence
from attention_core.methods.reach import bin_tokens, head_reach, text_reach

LONG_TEXT = Path(__file__).resolve().parents[2] / "examples" / "long_text.txt"


def _uniform(n: int) -> np.ndarray:
    """Each query spreads its weight evenly over keys 0..q."""
    lower = np.tril(np.ones((n, n)))
    return (lower / lower.sum(-1, keepdims=True))[None].astype(np.float32)


def _loop_reference(pattern_qk: np.ndarray, bin_size: int) -> dict[str, object]:
    """The measures written as their definitions, one query and one key at a time."""
    n = len(pattern_qk)
    p = pattern_qk.astype(np.float64)
    dist = [sum(p[q, k] * (q - k) for k in range(q + 1)) for q in range(n)]
    share = [dist[q] / q for q in range(1, n)]
    column = [np.mean([p[q, k] for q in range(n)]) for k in range(n)]
    bins = []
    for start in range(0, n, bin_size):
        qs = range(start, min(start + bin_size, n))
        shares = [dist[q] / q for q in qs if q > 0]
        bins.append((np.mean([p[q, 0] for q in qs]), np.mean(shares) if shares else np.nan))
    return {
        "sink": np.mean(p[:, 0]),
        "distance": np.mean(dist[1:]) if n > 1 else 0.0,
        "reach": np.mean(share) if share else np.nan,
        "top_key": int(np.argmax(column)),
        "bins": bins,
    }


def test_an_even_spread_reaches_half_way_and_its_sink_is_the_even_share():
    n = 40
    r = head_reach(_uniform(n), 16)
    np.testing.assert_allclose(r.reach_h, [0.5], atol=1e-6)
    np.testing.assert_allclose(r.distance_h, [np.mean(np.arange(1, n) / 2)], rtol=1e-6)
    np.testing.assert_allclose(r.sink_h, [np.mean(1 / np.arange(1, n + 1))], rtol=1e-6)
    np.testing.assert_allclose(r.reach_hb, [[0.5, 0.5, 0.5]], atol=1e-6)  # 3 bins: 0, 16, 32
    assert r.top_key_h.tolist() == [0]  # key 0 is seen by every query


def test_self_first_token_and_previous_token_heads():
    n = 12
    self_only = np.eye(n, dtype=np.float32)
    first_only = np.zeros((n, n), np.float32)
    first_only[:, 0] = 1
    previous = np.eye(n, k=-1, dtype=np.float32)
    previous[0, 0] = 1  # query 0 can only read itself
    r = head_reach(np.stack([self_only, first_only, previous]), 4)
    np.testing.assert_allclose(r.reach_h, [0.0, 1.0, np.mean(1 / np.arange(1, n))], rtol=1e-6)
    np.testing.assert_allclose(r.distance_h, [0.0, np.mean(np.arange(1, n)), 1.0], rtol=1e-6)
    np.testing.assert_allclose(r.sink_h, [1 / n, 1.0, 2 / n], rtol=1e-6)
    assert r.top_key_h.tolist()[1] == 0 and r.top_share_h[1] == pytest.approx(1.0)


def test_bins_follow_the_text_and_query_zero_has_no_reach():
    p = _uniform(5)
    r = head_reach(p, 1)  # one query per bin
    assert np.isnan(r.reach_hb[0, 0]) and np.allclose(r.reach_hb[0, 1:], 0.5)
    np.testing.assert_allclose(r.sink_hb[0], 1 / np.arange(1, 6), rtol=1e-6)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 24),
    bin_size=st.integers(1, 9),
    seed=st.integers(0, 2**16),
)
def test_vectorized_equals_the_plain_loop(n, bin_size, seed):
    rng = np.random.default_rng(seed)
    raw = rng.exponential(size=(2, n, n)) * np.tril(np.ones((n, n)))
    p = (raw / raw.sum(-1, keepdims=True)).astype(np.float32)
    r = head_reach(p, bin_size)
    for h in range(2):
        ref = _loop_reference(p[h], bin_size)
        assert r.sink_h[h] == pytest.approx(ref["sink"], rel=1e-6)
        assert r.distance_h[h] == pytest.approx(ref["distance"], rel=1e-6, abs=1e-9)
        np.testing.assert_allclose(r.reach_h[h], ref["reach"], rtol=1e-6)
        assert r.top_key_h[h] == ref["top_key"] or np.isclose(
            p[h].mean(0)[r.top_key_h[h]], p[h].mean(0)[ref["top_key"]]
        )
        np.testing.assert_allclose(r.sink_hb[h], [b[0] for b in ref["bins"]], rtol=1e-6)
        np.testing.assert_allclose(r.reach_hb[h], [b[1] for b in ref["bins"]], rtol=1e-6)


def test_bin_size_grows_with_the_text():
    assert [bin_tokens(n) for n in (5, 128, 512, 2048)] == [16, 16, 64, 256]
    with pytest.raises(ValueError, match="at least one token"):
        bin_tokens(0)


def test_bad_patterns_and_an_encoder_are_refused(model):
    with pytest.raises(ValueError, match="q == k"):
        head_reach(np.ones((2, 3, 4), np.float32), 4)
    with pytest.raises(ValueError, match="bin_size"):
        head_reach(_uniform(3), 0)
    with pytest.raises(ValueError, match="not causal"):
        text_reach(trace_sentence(model, "the river bank"))


LAYERS = (0, 14, 29)


@pytest.fixture(scope="module")
def long_case(smollm2):
    """SmolLM2's trace of the shipped long text's first ~600 tokens (cut at what the engine
    runs), and transformers' eager attentions of the same ids, hooked on ``LAYERS``."""
    torch = pytest.importorskip("torch")
    from tests.core.oracles import llama_oracle

    oracle = llama_oracle()
    text = LONG_TEXT.read_text()
    ids = oracle.ids(text)[:600]
    text_600 = oracle.tokenizer.decode(ids)
    trace = trace_sentence(smollm2, text_600)
    n = trace.n_tokens
    assert trace.tokens.input_ids_t.tolist() == ids[:n]
    kept: dict[int, np.ndarray] = {}
    handles = [
        oracle.layers[layer].self_attn.register_forward_hook(
            lambda _m, _a, out, layer=layer: kept.__setitem__(layer, out[1][0].numpy())
        )
        for layer in LAYERS
    ]
    try:
        with torch.no_grad():
            oracle.model(torch.as_tensor(ids[:n])[None])
    finally:
        for handle in handles:
            handle.remove()
    return trace, kept


def test_reach_of_smollm2_equals_transformers_eager_attentions(long_case):
    trace, theirs = long_case
    ours = text_reach(trace)
    size = ours.bin_size
    assert ours.sink_lh.shape == (trace.config.n_layers, trace.config.n_heads)
    for layer in LAYERS:
        ref = head_reach(theirs[layer], size)
        np.testing.assert_allclose(ours.sink_lh[layer], ref.sink_h, atol=1e-4)
        np.testing.assert_allclose(ours.reach_lh[layer], ref.reach_h, atol=1e-4)
        np.testing.assert_allclose(ours.distance_lh[layer], ref.distance_h, rtol=1e-4)
        np.testing.assert_allclose(ours.reach_lhb[layer], ref.reach_hb, atol=1e-4)
        np.testing.assert_allclose(ours.sink_lhb[layer], ref.sink_hb, atol=1e-4)
        np.testing.assert_array_equal(ours.top_key_lh[layer], ref.top_key_h)
        for h in range(trace.config.n_heads):  # the definitions, read off their pattern directly
            p = theirs[layer][h].astype(np.float64)
            q = np.arange(len(p))
            dist_q = (p * (q[:, None] - q[None, :])).sum(-1)
            assert ours.distance_lh[layer, h] == pytest.approx(dist_q[1:].mean(), rel=1e-4)
            assert ours.reach_lh[layer, h] == pytest.approx((dist_q[1:] / q[1:]).mean(), abs=1e-4)
            assert ours.sink_lh[layer, h] == pytest.approx(p[:, 0].mean(), abs=1e-4)
