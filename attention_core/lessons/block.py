"""A configurable multi-head attention block for experiments: choose heads, d_k and the weights.

Weights come from one of three sources:
  * ``random``     seeded Gaussian matrices, as an untrained layer starts;
  * ``similarity`` W_Q = W_K = an orthonormal projection, so Q·Kᵀ follows embedding similarity;
  * ``pretrained`` a real layer's heads, each head's W_Q·W_Kᵀ and W_V·W_O truncated to rank d_k
                   (biases left out), so small d_k shows what a low-rank head keeps.

Heads combine either as the sum of per-head proposals ΔE_h = pattern_h · V_h · W_O,h (the
notes' framing) or as concat(z_h) · W_O (the paper's framing); the two are the same linear
map, and the block computes whichever was asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from attention_core.core.family import Trace
from attention_core.core.functional import attention_steps
from attention_core.lessons.saturation import unit_rows
from attention_core.methods.pack import visible_tokens
from attention_core.models.bert.model import Model

F32 = NDArray[np.float32]
Source = Literal["random", "similarity", "pretrained"]
Combine = Literal["sum", "concat"]


@dataclass(frozen=True)
class BlockConfig:
    """One experimental attention block."""

    n_heads: int = 4  # number of heads
    d_k: int = 16  # query/key/value width per head
    source: Source = "random"  # where W_Q, W_K, W_V, W_O come from
    seed: int = 0  # random seed for "random" and "similarity"
    layer: int = 0  # which pretrained layer to borrow heads from ("pretrained")
    scale: bool = True  # divide scores by √d_k
    temperature: float = 1.0  # softmax temperature (> 0)
    causal: bool = False  # hide later tokens
    positional: bool = False  # add sinusoidal position encodings to the input
    combine: Combine = "sum"  # "sum" of per-head ΔE, or "concat" then W_O

    def __post_init__(self) -> None:
        if not 1 <= self.n_heads <= 64:
            raise ValueError(f"n_heads must be in [1, 64], got {self.n_heads}")
        if not 1 <= self.d_k <= 1024:
            raise ValueError(f"d_k must be in [1, 1024], got {self.d_k}")
        if self.source not in ("random", "similarity", "pretrained"):
            raise ValueError(f"unknown weight source {self.source!r}")
        if self.combine not in ("sum", "concat"):
            raise ValueError(f"combine must be 'sum' or 'concat', got {self.combine!r}")


@dataclass(frozen=True)
class BlockWeights:
    """Per-head projections; W_O is sliced per head: rows h·e..(h+1)·e of the concat matrix."""

    w_q_hde: F32
    w_k_hde: F32
    w_v_hde: F32
    w_o_hed: F32


@dataclass(frozen=True)
class BlockTrace:
    """Every stage of the experimental block. E' = x + ΔE."""

    positions_td: F32  # added position encodings (zeros when switched off)
    x_td: F32  # block input: embeddings + positions
    q_hqe: F32
    k_hke: F32
    v_hke: F32
    scores_hqk: F32  # raw Q·Kᵀ
    scaled_hqk: F32  # after ÷√d_k and temperature
    masked_hqk: F32  # hidden entries set to -inf
    pattern_hqk: F32  # softmax
    z_hqe: F32  # pattern · V
    head_delta_htd: F32  # each head's proposal ΔE_h
    delta_td: F32  # the combined update ΔE
    out_td: F32  # E' = x + ΔE


def sinusoidal_positions(n_tokens: int, d_model: int) -> F32:
    """The fixed sin/cos position encoding of "Attention Is All You Need", [t, d]."""
    pos = np.arange(n_tokens)[:, None]
    freq = np.exp(-np.log(10000.0) * (np.arange(0, d_model, 2) / d_model))
    out = np.zeros((n_tokens, d_model), dtype=np.float32)
    out[:, 0::2] = np.sin(pos * freq)
    out[:, 1::2] = np.cos(pos * freq[: d_model // 2])
    return out


def _orthonormal(rng: np.random.Generator, d: int, e: int) -> F32:
    # QR of a Gaussian gives a random orthonormal basis; past d columns, pad with zeros.
    basis, _ = np.linalg.qr(rng.standard_normal((d, min(d, e))))
    return np.pad(basis, ((0, 0), (0, e - basis.shape[1]))).astype(np.float32)


def _low_rank(a_de: NDArray[np.floating], b_de: NDArray[np.floating], rank: int) -> tuple[F32, F32]:
    """Factors (L, R), each [d, rank], with L·Rᵀ the best rank-``rank`` fit of a·bᵀ."""
    qa, ra = np.linalg.qr(a_de.astype(np.float64))
    qb, rb = np.linalg.qr(b_de.astype(np.float64))
    u, s, vt = np.linalg.svd(ra @ rb.T)
    r = min(rank, len(s))
    left = qa @ (u[:, :r] * np.sqrt(s[:r]))
    right = qb @ (vt[:r].T * np.sqrt(s[:r]))
    pad = ((0, 0), (0, rank - r))
    return np.pad(left, pad).astype(np.float32), np.pad(right, pad).astype(np.float32)


def _pretrained(cfg: BlockConfig, model: Model) -> BlockWeights:
    layer = model.params.layer(cfg.layer)
    w_q, w_k, w_v, w_o_hed = layer.w_q_hde, layer.w_k_hde, layer.w_v_hde, layer.w_o_hed
    src = [h % layer.n_heads for h in range(cfg.n_heads)]  # more heads than the layer: reuse
    qk = [_low_rank(w_q[s], w_k[s], cfg.d_k) for s in src]
    vo = [_low_rank(w_v[s], w_o_hed[s].T, cfg.d_k) for s in src]
    return BlockWeights(
        np.stack([q for q, _ in qk]),
        np.stack([k for _, k in qk]),
        np.stack([v for v, _ in vo]),
        np.stack([o.T for _, o in vo]),
    )


def make_block_weights(cfg: BlockConfig, d_model: int, model: Model | None = None) -> BlockWeights:
    """Build W_Q, W_K, W_V [h, d, e] and W_O [h, e, d] from ``cfg.source``."""
    if cfg.source == "pretrained":
        if model is None:
            raise ValueError("the 'pretrained' weight source needs a loaded model")
        return _pretrained(cfg, model)
    rng = np.random.default_rng(cfg.seed)
    h, e = cfg.n_heads, cfg.d_k
    if cfg.source == "similarity":
        p_hde = np.stack([_orthonormal(rng, d_model, e) for _ in range(h)])
        return BlockWeights(p_hde, p_hde, p_hde, p_hde.transpose(0, 2, 1).copy())
    std_in, std_out = 1 / np.sqrt(d_model), 1 / np.sqrt(h * e)

    def draw(shape: tuple[int, ...], std: float) -> F32:
        return (rng.standard_normal(shape) * std).astype(np.float32)

    return BlockWeights(
        draw((h, d_model, e), std_in),
        draw((h, d_model, e), std_in),
        draw((h, d_model, e), std_in),
        draw((h, e, d_model), std_out),
    )


def _combined(z_hqe: F32, head_delta_htd: F32, w_o_hed: F32, combine: Combine) -> F32:
    """ΔE as the sum of the heads' proposals, or as concat(z_h) · W_O."""
    if combine == "sum":
        return head_delta_htd.sum(axis=0)
    t = z_hqe.shape[1]
    z_concat = z_hqe.transpose(1, 0, 2).reshape(t, -1)  # [h,t,e] -> [t, h·e]
    return z_concat @ w_o_hed.reshape(-1, w_o_hed.shape[-1])  # [t,h·e] @ [h·e,d] -> [t,d]


def run_block(
    embed_td: F32,
    cfg: BlockConfig,
    weights: BlockWeights,
    key_mask_k: NDArray[np.bool_] | None = None,
) -> BlockTrace:
    """Run the block on token embeddings [t, d]; key_mask_k marks real (True) vs padding keys."""
    if embed_td.ndim != 2:
        raise ValueError(f"embeddings must be [tokens, d_model], got shape {embed_td.shape}")
    t, d = embed_td.shape
    if weights.w_q_hde.shape != (cfg.n_heads, d, cfg.d_k):
        raise ValueError(
            f"W_Q has shape {weights.w_q_hde.shape}, expected {(cfg.n_heads, d, cfg.d_k)}"
        )
    positions = sinusoidal_positions(t, d) if cfg.positional else np.zeros((t, d), np.float32)
    x_td = (embed_td + positions).astype(np.float32)
    q_hqe = np.einsum("td,hde->hte", x_td, weights.w_q_hde)
    k_hke = np.einsum("td,hde->hte", x_td, weights.w_k_hde)
    v_hke = np.einsum("td,hde->hte", x_td, weights.w_v_hde)
    scores_hqk = q_hqe @ k_hke.transpose(0, 2, 1)  # [h,q,e] @ [h,e,k] -> [h,q,k]
    steps = attention_steps(
        scores_hqk,
        cfg.d_k,
        scale=cfg.scale,
        temperature=cfg.temperature,
        causal=cfg.causal,
        key_mask_k=key_mask_k,
    )
    z_hqe = steps.pattern @ v_hke  # [h,q,k] @ [h,k,e] -> [h,q,e]
    head_delta_htd = z_hqe @ weights.w_o_hed  # [h,t,e] @ [h,e,d] -> [h,t,d]
    delta_td = _combined(z_hqe, head_delta_htd, weights.w_o_hed, cfg.combine)
    return BlockTrace(
        positions,
        x_td,
        q_hqe,
        k_hke,
        v_hke,
        steps.scores,
        steps.scaled,
        steps.masked,
        steps.pattern,
        z_hqe,
        head_delta_htd,
        delta_td,
        x_td + delta_td,
    )


@dataclass(frozen=True)
class BlockView:
    """What the Build-your-own-head page shows of one run of the block."""

    scores_hqk: F32  # every head's raw Q·Kᵀ (the browser applies the switches)
    pattern_hqk: F32  # every head's softmax pattern
    head_norm_ht: F32  # ‖ΔE_h‖ per head and token
    delta_norm_t: F32  # ‖ΔE‖ of the combined update per token
    combine_gap: float  # max |ΔE(sum of proposals) − ΔE(concat then W_O)| over all entries
    delta_max: float  # max |ΔE| entry, for scale


def view_block(x_td: F32, cfg: BlockConfig, weights: BlockWeights) -> BlockView:
    """Run the block once, and compare its ΔE with the other way of combining the heads (the
    same z and W_O): the two framings are one linear map, so the gap is float rounding."""
    run = run_block(x_td, cfg, weights)
    other = _combined(
        run.z_hqe, run.head_delta_htd, weights.w_o_hed, "concat" if cfg.combine == "sum" else "sum"
    )
    return BlockView(
        scores_hqk=run.scores_hqk,
        pattern_hqk=run.pattern_hqk,
        head_norm_ht=np.linalg.norm(run.head_delta_htd, axis=-1),
        delta_norm_t=np.linalg.norm(run.delta_td, axis=-1),
        combine_gap=float(np.abs(run.delta_td - other).max()),
        delta_max=float(np.abs(run.delta_td).max()),
    )


def unit_variance(x_td: NDArray[np.floating]) -> F32:
    """Each row rescaled to length √d (unit variance per dimension): the size a real layer's
    LayerNormed input has, and the size the random weights (std 1/√d) are drawn for."""
    return (unit_rows(x_td) * np.sqrt(x_td.shape[-1])).astype(np.float32)


def block_input(trace: Trace, hide_special: bool) -> tuple[tuple[str, ...], F32]:
    """The block's input for a sentence: the model's static word embeddings of the tokens on
    show (``pack.visible_tokens``), at unit variance per dimension, and those tokens."""
    keep = visible_tokens(trace.tokens.special_t, hide_special)
    tokens = tuple(trace.tokens.tokens[i] for i in keep)
    return tokens, unit_variance(trace.word_td[keep])
