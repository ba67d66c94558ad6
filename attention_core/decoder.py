"""A decoder block demonstrated with an encoder's weights: masked self-attention, cross-attention.

MiniLM is an encoder: it has no decoder and was never trained to generate text. To show what a
decoder block does, this module borrows one trained layer's W_Q, W_K, W_V, W_O (and its
LayerNorm) and the model's embeddings, and runs them the decoder's way:

  1. masked self-attention over the target sentence: each target token sees itself and the
     tokens before it, never the ones after (causal mask);
  2. cross-attention: queries come from the target (after step 1), keys and values from the
     source sentence as the encoder left it (its last hidden state).

Both run ``attention.multi_head_attention``, the encoder's own; with a key mask it also shows a
padded batch row. Every intermediate is returned in frozen dataclasses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attention_core.attention import AttentionPass, multi_head_attention
from attention_core.forward import embed, run_model
from attention_core.functional import layer_norm
from attention_core.model import Model
from attention_core.tokens import Tokens
from attention_core.weights import LayerWeights

F32 = NDArray[np.float32]


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


def _add_norm(model: Model, layer: LayerWeights, x_td: F32, delta_td: F32) -> F32:
    norm = layer.attn_norm
    return layer_norm(x_td + delta_td, norm.gamma_d, norm.beta_d, model.config.layer_norm_eps)


def run_decoder(model: Model, source: Tokens, target: Tokens, layer: int) -> DecoderTrace:
    """Encode ``source`` with the whole model, then run one decoder-style block on ``target``
    with layer ``layer``'s attention weights (used for both self- and cross-attention)."""
    weights = model.params.layer(layer)
    memory_kd = run_model(model, source).hidden_ltd[-1]
    target_td = embed(model, target.input_ids_t)[-1]
    self_attn = multi_head_attention(weights, target_td, causal=True)
    mid_td = _add_norm(model, weights, target_td, self_attn.delta_qd)
    cross = multi_head_attention(weights, mid_td, memory_kd)
    out_td = _add_norm(model, weights, mid_td, cross.delta_qd)
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
