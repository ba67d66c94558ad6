"""A decoder block demonstrated with an encoder's weights: masked self-attention, cross-attention.

MiniLM is an encoder: it has no decoder and was never trained to generate text. To show what a
decoder block does, this module borrows one trained layer's W_Q, W_K, W_V, W_O (and its
LayerNorm) and the model's embeddings, and runs them the decoder's way:

  1. masked self-attention over the target sentence: each target token sees itself and the
     tokens before it, never the ones after (causal mask);
  2. cross-attention: queries come from the target (after step 1), keys and values from the
     source sentence as the encoder left it (its last hidden state).

The same multi-head function, with a key mask, also shows a padded batch row.
Every intermediate is returned in frozen dataclasses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attention_core.forward import _linear, _split_heads, embed, run_model
from attention_core.functional import attention_steps, layer_norm
from attention_core.model import Model
from attention_core.tokens import Tokens

F32 = NDArray[np.float32]


@dataclass(frozen=True)
class AttentionPass:
    """One multi-head attention sub-layer: queries from x, keys and values from a memory."""

    q_hqe: F32  # queries, from the attending sequence
    k_hke: F32  # keys, from the memory (the same sequence for self-attention)
    v_hke: F32  # values, from the memory
    scores_hqk: F32  # raw Q·Kᵀ
    masked_hqk: F32  # ÷√d_k, hidden entries at -inf
    pattern_hqk: F32  # softmax over keys; hidden entries exactly 0
    z_hqe: F32  # pattern · V
    head_delta_hqd: F32  # each head's update z_h · W_O,h
    delta_qd: F32  # Σ_h head_delta + b_O, added to the attending sequence
    allowed_qk: NDArray[np.bool_]  # True where a query may see a key


@dataclass(frozen=True)
class DecoderTrace:
    """A decoder block's attention half on (source, target), with one borrowed layer."""

    source: Tokens  # the sentence the encoder read
    target: Tokens  # the sentence the decoder reads
    layer: int  # whose W_Q, W_K, W_V, W_O and LayerNorm are borrowed
    memory_kd: F32  # encoder output for the source: keys and values of cross-attention
    target_td: F32  # LayerNormed target embeddings: the decoder block's input
    self_attn: AttentionPass  # causal self-attention over the target
    mid_td: F32  # LayerNorm(target + self-attention ΔE): the cross-attention queries' input
    cross: AttentionPass  # queries from mid_td, keys/values from memory_kd
    out_td: F32  # LayerNorm(mid + cross-attention ΔE)


def multi_head_attention(
    model: Model,
    layer: int,
    x_qd: F32,
    memory_kd: F32,
    *,
    causal: bool = False,
    key_mask_k: NDArray[np.bool_] | None = None,
) -> AttentionPass:
    """Layer ``layer``'s attention with queries from ``x_qd`` [q, d] and keys/values from
    ``memory_kd`` [k, d]; ``memory_kd is x_qd`` gives self-attention as the encoder runs it."""
    cfg = model.config
    if not 0 <= layer < cfg.n_layers:
        raise ValueError(f"layer must be in [0, {cfg.n_layers - 1}], got {layer}")
    for name, arr in (("x_qd", x_qd), ("memory_kd", memory_kd)):
        if arr.ndim != 2 or arr.shape[1] != cfg.d_model:
            raise ValueError(f"{name} must be [n, {cfg.d_model}], got shape {arr.shape}")
    w, pre = model.weights, f"encoder.layer.{layer}.attention"
    q_hqe = _split_heads(_linear(x_qd, w, f"{pre}.self.query"), cfg.n_heads)
    k_hke = _split_heads(_linear(memory_kd, w, f"{pre}.self.key"), cfg.n_heads)
    v_hke = _split_heads(_linear(memory_kd, w, f"{pre}.self.value"), cfg.n_heads)
    scores_hqk = q_hqe @ k_hke.transpose(0, 2, 1)  # [h,q,e] @ [h,e,k] -> [h,q,k]
    steps = attention_steps(scores_hqk, cfg.d_head, causal=causal, key_mask_k=key_mask_k)
    z_hqe = steps.pattern @ v_hke  # [h,q,k] @ [h,k,e] -> [h,q,e]
    w_o_hed = w[f"{pre}.output.dense.weight"].T.reshape(cfg.n_heads, cfg.d_head, cfg.d_model)
    head_delta_hqd = z_hqe @ w_o_hed  # [h,q,e] @ [h,e,d] -> [h,q,d]
    delta_qd = head_delta_hqd.sum(axis=0) + w[f"{pre}.output.dense.bias"]
    return AttentionPass(
        q_hqe, k_hke, v_hke, scores_hqk, steps.masked, steps.pattern,
        z_hqe.astype(np.float32, copy=False), head_delta_hqd.astype(np.float32, copy=False),
        delta_qd, steps.allowed_qk,
    )  # fmt: skip


def _add_norm(model: Model, layer: int, x_td: F32, delta_td: F32) -> F32:
    w = model.weights
    name = f"encoder.layer.{layer}.attention.output.LayerNorm"
    return layer_norm(
        x_td + delta_td, w[f"{name}.weight"], w[f"{name}.bias"], model.config.layer_norm_eps
    )


def run_decoder(model: Model, source: Tokens, target: Tokens, layer: int) -> DecoderTrace:
    """Encode ``source`` with the whole model, then run one decoder-style block on ``target``
    with layer ``layer``'s attention weights (used for both self- and cross-attention)."""
    memory_kd = run_model(model, source).hidden_ltd[-1]
    target_td = embed(model, target.input_ids_t)[-1]
    self_attn = multi_head_attention(model, layer, target_td, target_td, causal=True)
    mid_td = _add_norm(model, layer, target_td, self_attn.delta_qd)
    cross = multi_head_attention(model, layer, mid_td, memory_kd)
    out_td = _add_norm(model, layer, mid_td, cross.delta_qd)
    return DecoderTrace(
        source, target, layer, memory_kd, target_td, self_attn, mid_td, cross, out_td
    )


def padded_input(model: Model, tokens: Tokens, n_pad: int) -> tuple[F32, NDArray[np.bool_]]:
    """The first layer's input for ``tokens`` followed by ``n_pad`` [PAD] tokens, as a batch
    pads a short sentence, and the key mask marking real (True) versus padding (False) keys."""
    if n_pad < 0 or len(tokens) + n_pad > model.config.n_positions:
        raise ValueError(f"n_pad must be in [0, {model.config.n_positions - len(tokens)}]")
    pad_id = model.tokenizer.token_to_id("[PAD]")
    if pad_id is None:
        raise ValueError("the tokenizer has no [PAD] token")
    ids_t = np.concatenate([tokens.input_ids_t, np.full(n_pad, pad_id, dtype=np.int64)])
    key_mask_k = np.arange(len(ids_t)) < len(tokens)
    return embed(model, ids_t)[-1], key_mask_k
