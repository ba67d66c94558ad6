"""The configurable block against torch.nn.MultiheadAttention, and its three weight sources.

With ``combine="concat"`` and n_heads·d_k == d_model the block is exactly torch's multi-head
attention without biases: in_proj_weight stacks W_Q, W_K, W_V as [h·e, d] each, out_proj.weight
is W_Oᵀ. Torch's attn_mask / key_padding_mask mark hidden entries with True; our key_mask_k marks
real keys with True.
"""

from __future__ import annotations

import numpy as np
import pytest
from safetensors.numpy import load_file

torch = pytest.importorskip("torch")

from attention_core import (  # noqa: E402
    BlockConfig,
    BlockWeights,
    make_block_weights,
    run_block,
)

# (d_model, n_heads, d_k, source): torch needs n_heads·d_k == d_model
CASES = [
    (16, 4, 4, "random"),
    (384, 12, 32, "random"),
    (384, 12, 32, "similarity"),
    (384, 12, 32, "pretrained"),
]


_WEIGHTS: dict[tuple, BlockWeights] = {}


def _weights(model, cfg: BlockConfig, d: int) -> BlockWeights:
    """make_block_weights, cached: only source, shape, seed and layer change the weights."""
    key = (cfg.source, cfg.n_heads, cfg.d_k, cfg.seed, cfg.layer, d)
    if key not in _WEIGHTS:
        _WEIGHTS[key] = make_block_weights(cfg, d, model)
    return _WEIGHTS[key]


@pytest.fixture(scope="module")
def raw_weights(model):
    return load_file(str(model.path / "model.safetensors"))


def _torch_mha(weights: BlockWeights) -> torch.nn.MultiheadAttention:
    h, d, e = weights.w_q_hde.shape
    mha = torch.nn.MultiheadAttention(embed_dim=d, num_heads=h, bias=False, batch_first=True)

    def rows(w_hde: np.ndarray) -> np.ndarray:  # [h,d,e] -> [h·e, d], head h in rows h·e..
        return w_hde.transpose(0, 2, 1).reshape(h * e, d)

    in_proj = np.concatenate([rows(weights.w_q_hde), rows(weights.w_k_hde), rows(weights.w_v_hde)])
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.from_numpy(in_proj))
        mha.out_proj.weight.copy_(torch.from_numpy(weights.w_o_hed.reshape(h * e, d).T.copy()))
    return mha.eval()


def _inputs(model, d: int, t: int, seed: int) -> np.ndarray:
    if d == model.config.d_model:  # real word embeddings, the magnitudes the block sees in use
        rng = np.random.default_rng(seed)
        ids = rng.integers(1000, model.config.vocab_size, size=t)
        return model.weights["embeddings.word_embeddings.weight"][ids].copy()
    return np.random.default_rng(seed).standard_normal((t, d)).astype(np.float32)


@pytest.mark.parametrize(("d", "h", "e", "source"), CASES)
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("n_pad", [0, 3], ids=["no_pad", "pad3"])
def test_concat_block_equals_torch_multihead_attention(model, d, h, e, source, causal, n_pad):
    t = 9
    cfg = BlockConfig(n_heads=h, d_k=e, source=source, seed=7, causal=causal, combine="concat")
    weights = _weights(model, cfg, d)
    x_td = _inputs(model, d, t, seed=d + h)
    key_mask_k = np.arange(t) < t - n_pad  # padding at the end
    ours = run_block(x_td, cfg, weights, key_mask_k=key_mask_k if n_pad else None)

    x = torch.from_numpy(x_td)[None]
    attn_mask = torch.from_numpy(~np.tril(np.ones((t, t), dtype=bool))) if causal else None
    key_padding_mask = torch.from_numpy(~key_mask_k)[None] if n_pad else None
    with torch.no_grad():
        out, attn = _torch_mha(weights)(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=True,
            average_attn_weights=False,
        )
    real = slice(0, t - n_pad)  # rows of real query positions
    scale = max(1.0, float(np.abs(ours.delta_td).max()))
    np.testing.assert_allclose(ours.delta_td[real], out[0, real].numpy(), atol=1e-5 * scale)
    np.testing.assert_allclose(ours.pattern_hqk[:, real], attn[0, :, real].numpy(), atol=1e-5)
    if n_pad:
        assert (ours.pattern_hqk[:, :, t - n_pad :] == 0).all()
    if causal:
        assert (np.triu(ours.pattern_hqk, k=1) == 0).all()


@pytest.mark.parametrize(("d", "h", "e", "source"), CASES)
def test_sum_and_concat_give_the_same_delta(model, d, h, e, source):
    cfg = BlockConfig(n_heads=h, d_k=e, source=source, seed=7, combine="sum")
    weights = _weights(model, cfg, d)
    x_td = _inputs(model, d, 11, seed=1)
    summed = run_block(x_td, cfg, weights)
    concat = run_block(x_td, BlockConfig(**{**cfg.__dict__, "combine": "concat"}), weights)
    scale = max(1.0, float(np.abs(summed.delta_td).max()))
    np.testing.assert_allclose(summed.delta_td, concat.delta_td, atol=1e-5 * scale)
    np.testing.assert_allclose(summed.head_delta_htd.sum(axis=0), summed.delta_td, atol=1e-6)


@pytest.mark.parametrize("source", ["random", "similarity", "pretrained"])
@pytest.mark.parametrize(("h", "e"), [(1, 1), (3, 8), (12, 32), (16, 64)])
def test_each_source_gives_the_documented_shapes(model, source, h, e):
    d, t = model.config.d_model, 6
    cfg = BlockConfig(n_heads=h, d_k=e, source=source, positional=True)
    w = make_block_weights(cfg, d, model)
    assert w.w_q_hde.shape == w.w_k_hde.shape == w.w_v_hde.shape == (h, d, e)
    assert w.w_o_hed.shape == (h, e, d)
    assert all(a.dtype == np.float32 for a in (w.w_q_hde, w.w_k_hde, w.w_v_hde, w.w_o_hed))
    out = run_block(_inputs(model, d, t, seed=0), cfg, w)
    for name in ("positions_td", "x_td", "delta_td", "out_td"):
        assert getattr(out, name).shape == (t, d), name
    for name in ("q_hqe", "k_hke", "v_hke", "z_hqe"):
        assert getattr(out, name).shape == (h, t, e), name
    for name in ("scores_hqk", "scaled_hqk", "masked_hqk", "pattern_hqk"):
        assert getattr(out, name).shape == (h, t, t), name
    assert out.head_delta_htd.shape == (h, t, d)
    np.testing.assert_allclose(out.pattern_hqk.sum(axis=-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(out.out_td, out.x_td + out.delta_td)


def test_pretrained_source_needs_a_model_and_a_valid_layer(model):
    with pytest.raises(ValueError, match="pretrained"):
        make_block_weights(BlockConfig(source="pretrained"), 384)
    with pytest.raises(ValueError, match="layer"):
        make_block_weights(BlockConfig(source="pretrained", layer=6), 384, model)


@pytest.mark.parametrize("layer", [0, 3, 5])
def test_pretrained_full_rank_reproduces_the_heads_bilinear_forms(model, raw_weights, layer):
    raw = raw_weights
    pre = f"encoder.layer.{layer}.attention"
    w_q, w_k = raw[f"{pre}.self.query.weight"], raw[f"{pre}.self.key.weight"]  # [h·e, d]
    w_v, w_o = raw[f"{pre}.self.value.weight"], raw[f"{pre}.output.dense.weight"]  # w_o [d, h·e]
    cfg = BlockConfig(n_heads=12, d_k=32, source="pretrained", layer=layer, seed=7)
    ours = _weights(model, cfg, 384)
    for head in range(12):
        rows = slice(32 * head, 32 * (head + 1))
        qk_theirs = w_q[rows].T @ w_k[rows]  # [d,e] @ [e,d] -> [d,d]
        qk_ours = ours.w_q_hde[head] @ ours.w_k_hde[head].T
        np.testing.assert_allclose(qk_ours, qk_theirs, atol=1e-4, err_msg=f"W_QK head {head}")
        ov_theirs = w_v[rows].T @ w_o[:, rows].T  # [d,e] @ [e,d] -> [d,d]
        ov_ours = ours.w_v_hde[head] @ ours.w_o_hed[head]
        np.testing.assert_allclose(ov_ours, ov_theirs, atol=1e-4, err_msg=f"W_OV head {head}")


def test_similarity_with_full_width_scores_are_x_xt(model):
    d, t = 32, 7
    cfg = BlockConfig(n_heads=2, d_k=d, source="similarity", seed=5)
    weights = make_block_weights(cfg, d, model)
    x_td = np.random.default_rng(2).standard_normal((t, d)).astype(np.float32)
    out = run_block(x_td, cfg, weights)
    for head in range(2):
        np.testing.assert_allclose(out.scores_hqk[head], x_td @ x_td.T, rtol=1e-5, atol=1e-4)


def test_similarity_at_model_width_on_real_embeddings(model):
    d = model.config.d_model
    cfg = BlockConfig(n_heads=1, d_k=d, source="similarity")
    x_td = _inputs(model, d, 5, seed=4)
    out = run_block(x_td, cfg, make_block_weights(cfg, d, model))
    np.testing.assert_allclose(out.scores_hqk[0], x_td @ x_td.T, rtol=1e-4, atol=1e-5)
