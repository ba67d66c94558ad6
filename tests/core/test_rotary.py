"""Rotary and learned positions (attention_core.core.positions) against independent references:
transformers' own RoPE (LlamaRotaryEmbedding + apply_rotary_pos_emb), explicit 2×2 rotation
matrices, the RoFormer identity R(m)q · R(n)k = q · R(n-m)k, the real model's scores, and
MiniLM's position table through a plain loop."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.core.positions import (
    cosine_sum,
    head_distance,
    position_similarity,
    rope_frequencies,
    rotate,
    score_by_distance,
    unrotate,
)

D_HEAD, BASE = 64, 100000.0
FREQS = rope_frequencies(D_HEAD, BASE)
RNG = np.random.default_rng(7)


def _matrix(angle_b: np.ndarray) -> np.ndarray:
    """The rotation of rotate-half RoPE as one explicit d×d matrix (a 2×2 block per band)."""
    half = angle_b.size
    out = np.zeros((2 * half, 2 * half))
    for b, a in enumerate(angle_b):
        out[b, b], out[b, b + half] = np.cos(a), -np.sin(a)
        out[b + half, b], out[b + half, b + half] = np.sin(a), np.cos(a)
    return out


def _smollm2_rope_config():
    """transformers' LlamaConfig with SmolLM2-135M's attention sizes and rotary base."""
    from transformers import LlamaConfig

    return LlamaConfig(
        hidden_size=576,
        num_attention_heads=9,
        num_key_value_heads=3,
        head_dim=D_HEAD,
        rope_theta=BASE,
    )


def test_frequencies_match_transformers():
    torch = pytest.importorskip("torch")
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    cfg = _smollm2_rope_config()
    inv_freq = LlamaRotaryEmbedding(cfg).inv_freq.to(torch.float64).numpy()
    np.testing.assert_allclose(FREQS, inv_freq, rtol=1e-6)


def test_rotation_matches_transformers_apply_rotary_pos_emb():
    torch = pytest.importorskip("torch")
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    cfg = _smollm2_rope_config()
    t = 40
    q, k = RNG.standard_normal((2, t, D_HEAD))
    pos = torch.arange(t)[None]
    cos, sin = LlamaRotaryEmbedding(cfg)(torch.zeros(1, t, 576, dtype=torch.float64), pos)
    as_t = [torch.tensor(x, dtype=torch.float64)[None, None] for x in (q, k)]
    q_ref, k_ref = apply_rotary_pos_emb(*as_t, cos.to(torch.float64), sin.to(torch.float64))
    np.testing.assert_allclose(rotate(q, np.arange(t), FREQS), q_ref[0, 0].numpy(), atol=1e-5)
    np.testing.assert_allclose(rotate(k, np.arange(t), FREQS), k_ref[0, 0].numpy(), atol=1e-5)


def test_rotation_is_the_explicit_matrix_and_undoes_itself():
    x = RNG.standard_normal((5, D_HEAD))
    pos = np.array([0, 1, 7, 100, 511])
    for i, row in enumerate(rotate(x, pos, FREQS)):
        np.testing.assert_allclose(row, _matrix(pos[i] * FREQS) @ x[i], atol=1e-12)
    np.testing.assert_allclose(unrotate(rotate(x, np.arange(5), FREQS), FREQS), x, atol=1e-12)


@pytest.mark.parametrize(("m", "n"), [(0, 0), (3, 1), (17, 2), (300, 299), (5, 40)])
def test_score_depends_only_on_the_distance(m, n):
    q, k = RNG.standard_normal((2, D_HEAD))
    absolute = rotate(q[None], [m], FREQS)[0] @ rotate(k[None], [n], FREQS)[0]
    relative = q @ _matrix((n - m) * FREQS) @ k  # q · R(n - m)k
    assert absolute == pytest.approx(relative, rel=1e-10, abs=1e-10)
    assert score_by_distance(q, k, np.array([m - n]), FREQS)[0] == pytest.approx(
        relative, rel=1e-10
    )


def test_cosine_sum_is_the_score_of_a_vector_with_itself():
    x = np.ones(D_HEAD)  # every band the same length: the score is Σ 2cos(Δθ_b)
    deltas = np.arange(50)
    np.testing.assert_allclose(
        score_by_distance(x, x, deltas, FREQS) / (x @ x), cosine_sum(deltas, FREQS), atol=1e-12
    )
    assert cosine_sum(np.array([0]), FREQS)[0] == 1.0


def test_head_distance_is_the_mean_over_all_pairs():
    t = 9
    q_raw, k_raw = RNG.standard_normal((2, t, D_HEAD))
    q, k = rotate(q_raw, np.arange(t), FREQS), rotate(k_raw, np.arange(t), FREQS)
    curve = head_distance(q, k, FREQS, 6)
    for delta in range(7):
        pairs = [q_raw[i] @ _matrix(-delta * FREQS) @ k_raw[j] for i in range(t) for j in range(t)]
        assert curve.mean_score[delta] == pytest.approx(np.mean(pairs) / 8.0, rel=1e-9, abs=1e-12)


def test_position_similarity_against_a_plain_loop():
    table = RNG.standard_normal((30, 16))
    sim = position_similarity(table, 5, n_positions=20)
    for delta in range(6):
        cos = [
            table[i]
            @ table[i + delta]
            / np.linalg.norm(table[i])
            / np.linalg.norm(table[i + delta])
            for i in range(20 - delta)
        ]
        assert sim.mean[delta] == pytest.approx(np.mean(cos))
        assert (sim.low[delta], sim.high[delta]) == pytest.approx((min(cos), max(cos)))
    with pytest.raises(ValueError, match="max_distance"):
        position_similarity(table, 20, n_positions=20)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="even"):
        rope_frequencies(63, BASE)
    with pytest.raises(ValueError, match="bands"):
        rotate(np.zeros((2, 10)), [0, 1], FREQS)


def test_the_real_scores_depend_only_on_distance(smollm2):
    """SmolLM2's own raw scores Q·Kᵀ equal q · R(-Δ)k of its queries and keys turned back to
    position 0, with the frequencies from its config: the engine's RoPE is this RoPE."""
    from attention_core import trace_sentence

    cfg = smollm2.config
    freqs = rope_frequencies(cfg.d_head, cfg.rope_theta)
    trace = trace_sentence(smollm2, "The river bank was muddy after the rain")
    n = trace.n_tokens
    for layer, head in [(0, 0), (5, 4), (29, 8)]:
        q = unrotate(trace.q_lhqe[layer, head], freqs)
        k = unrotate(trace.k_lhke[layer, head], freqs)
        scores = np.asarray(trace.scores_lhqk[layer, head], dtype=np.float64)
        ref = [
            [score_by_distance(q[i], k[j], np.array([i - j]), freqs)[0] for j in range(n)]
            for i in range(n)
        ]
        np.testing.assert_allclose(ref, scores, atol=1e-5 * np.abs(scores).max())
        curve = head_distance(trace.q_lhqe[layer, head], trace.k_lhke[layer, head], freqs, n - 1)
        by_pair = [
            np.mean([q[i] @ _matrix(-d * freqs) @ k[j] for i in range(n) for j in range(n)])
            for d in range(n)
        ]
        np.testing.assert_allclose(
            curve.mean_score * np.sqrt(cfg.d_head), by_pair, rtol=1e-9, atol=1e-9
        )


def test_minilm_positions_are_most_alike_at_distance_zero(model):
    table = model.params.embeddings.position_pd
    sim = position_similarity(table, 64)
    assert sim.mean[0] == pytest.approx(1.0)
    assert sim.mean[1:].max() < 1.0
    assert sim.distances.size == 65
