"""How one token's attention update ΔE is built from value vectors, with every number kept.

For a query token t in layer l and head h: z = Σ_j a_j V_j, with a_j the pattern row of t;
z through the head's slice of W_O is that head's proposal ΔE_h; the layer's ΔE is
Σ_h ΔE_h + b_O; E + ΔE goes into a LayerNorm, the feed-forward network adds its own update to
that, and a second LayerNorm gives the token's vector after the block (this BERT is post-norm).
SmolLM2 (pre-norm, no b_O) adds both updates to the stream as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from attention_core.core.config import ModelConfig
from attention_core.core.family import Trace, pools_sentence

F32 = NDArray[np.float32]


@dataclass(frozen=True)
class ValueUpdate:
    """One token's attention update in one layer, with one head's weighted sum spelled out."""

    weights_k: F32  # a_j: the query token's pattern row in the chosen head
    v_ke: F32  # V_j: value vector of every key in the chosen head
    v_norms_k: F32  # ‖V_j‖
    z_e: F32  # Σ_j a_j V_j, computed here from the two above
    head_delta_d: F32  # the chosen head's ΔE_h (z through its slice of W_O, no bias)
    head_norms_h: F32  # ‖ΔE_h‖ for every head of the layer
    bias_d: F32  # b_O, the output projection's bias, added once per layer
    heads_sum_d: F32  # Σ_h ΔE_h + b_O, summed here
    delta_d: F32  # the layer's ΔE for this token, as the forward pass computed it
    sum_error: float  # max |Σ_h ΔE_h + b_O − ΔE| over the d_model dimensions
    hidden_d: F32  # E: the token's vector entering the layer
    updated_d: F32  # E + ΔE, before the LayerNorm
    normed_d: F32 | None  # LayerNorm(E + ΔE): BERT's feed-forward input (None: a pre-norm
    # decoder adds the feed-forward's update to E + ΔE itself, and normalizes only its input)
    ffn_out_d: F32  # the feed-forward network's update, added to normed_d
    next_d: F32  # LayerNorm(normed_d + ffn_out_d): the token's vector after this block
    delta_norms_t: F32  # ‖ΔE‖ of every token in this layer


class _Layered(Protocol):
    """A model whose weights are read a layer at a time (``params.layer(i)``)."""

    @property
    def config(self) -> ModelConfig: ...
    @property
    def params(self) -> Any: ...


def output_bias(model: _Layered, layer: int) -> F32:
    """b_O of a layer's attention output projection (zeros for a model without one: Llama)."""
    weights = model.params.layer(layer)
    bias = getattr(weights, "b_o_d", None)
    return np.zeros(model.config.d_model, np.float32) if bias is None else bias


def value_update(trace: Trace, bias_d: F32, layer: int, head: int, token: int) -> ValueUpdate:
    """Take apart ``token``'s update in ``layer``: the chosen head's weighted sum of values, every
    head's proposal, and their sum against the ΔE the forward pass added to the stream."""
    n_layers, n_heads, n = trace.pattern_lhqk.shape[:3]
    if not (0 <= layer < n_layers and 0 <= head < n_heads and 0 <= token < n):
        raise ValueError(
            f"(layer {layer}, head {head}, token {token}) is outside {n_layers}×{n_heads}×{n}"
        )
    if bias_d.shape != trace.delta_ltd.shape[-1:]:
        raise ValueError(
            f"bias shape {bias_d.shape} does not match d_model {trace.delta_ltd.shape}"
        )
    weights_k = trace.pattern_lhqk[layer, head, token]
    v_ke = trace.v_lhke[layer, head]
    heads_hd = trace.head_delta_hd(layer, token)
    heads_sum_d = (heads_hd.astype(np.float64).sum(axis=0) + bias_d).astype(np.float32)
    delta_d = trace.delta_ltd[layer, token]
    hidden_d = trace.hidden_ltd[layer, token]
    normed_d = None
    if trace.config.post_norm and pools_sentence(trace):  # BERT: a LayerNorm between the updates
        normed_d = trace.attn_out_ltd[layer, token]
    return ValueUpdate(
        weights_k=weights_k,
        v_ke=v_ke,
        v_norms_k=np.linalg.norm(v_ke, axis=-1),
        z_e=(weights_k.astype(np.float64) @ v_ke).astype(np.float32),  # [k] @ [k,e] -> [e]
        head_delta_d=heads_hd[head],
        head_norms_h=np.linalg.norm(heads_hd, axis=-1),
        bias_d=bias_d,
        heads_sum_d=heads_sum_d,
        delta_d=delta_d,
        sum_error=float(np.abs(heads_sum_d - delta_d).max()),
        hidden_d=hidden_d,
        updated_d=hidden_d + delta_d,
        normed_d=normed_d,
        ffn_out_d=trace.ffn_out_ltd[layer, token],
        next_d=trace.hidden_ltd[layer + 1, token],
        delta_norms_t=np.linalg.norm(trace.delta_ltd[layer], axis=-1),
    )


def default_token(tokens: Sequence[str], special_t: NDArray[np.bool_]) -> int:
    """The last real word before [SEP]: the last non-special token with a letter or digit in it
    (falling back to the last non-special token, then to position 0)."""
    ordinary = [i for i in range(len(tokens)) if not special_t[i]]
    words = [i for i in ordinary if any(ch.isalnum() for ch in tokens[i])]
    return (words or ordinary or [0])[-1]


def largest_terms(weights_k: F32, limit: int = 8, floor: float = 0.005) -> NDArray[np.int64]:
    """Keys of the biggest weights, largest first: at most ``limit``, none below ``floor``
    (but always the largest one), for writing z = Σ a_j V_j out by hand."""
    order = np.argsort(-np.asarray(weights_k), kind="stable")[:limit]
    return order[: max(1, int((weights_k[order] >= floor).sum()))]


def update_steps(update: ValueUpdate, last_layer: bool = False) -> dict[str, F32]:
    """The vectors from z to the token's vector after the block, in order, labelled as on
    screen: post-norm BERT (attention's update, LayerNorm, feed-forward's update, LayerNorm) or
    a pre-norm decoder (the updates added to the stream as they are; after the last layer the
    final RMSNorm, as transformers' last hidden state)."""
    if update.normed_d is None:
        after = "after the final RMSNorm" if last_layer else "after the block: E+ΔE+feed-forward"
        return {
            "z = Σ a_j V_j": update.z_e,
            "ΔE_h = z · W_O (this head)": update.head_delta_d,
            "Σ_h ΔE_h (all heads; no bias)": update.heads_sum_d,
            "ΔE (the layer's update)": update.delta_d,
            "E (entering the layer)": update.hidden_d,
            "E + ΔE": update.updated_d,
            "feed-forward's update (it reads RMSNorm(E + ΔE))": update.ffn_out_d,
            after: update.next_d,
        }
    return {
        "z = Σ a_j V_j": update.z_e,
        "ΔE_h = z · W_O (this head)": update.head_delta_d,
        "Σ_h ΔE_h + b_O (all heads)": update.heads_sum_d,
        "ΔE (the layer's update)": update.delta_d,
        "E (entering the layer)": update.hidden_d,
        "E + ΔE (before LayerNorm)": update.updated_d,
        "LayerNorm(E + ΔE)": update.normed_d,
        "feed-forward's update": update.ffn_out_d,
        "after the block: LayerNorm(… + feed-forward)": update.next_d,
    }
