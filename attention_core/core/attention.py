"""Multi-head attention of one layer: queries from one sequence, keys and values from another.

``multi_head_attention(layer, x_qd)`` is a sequence attending to itself, as every encoder layer
does (the forward pass runs it, writing into its stacked arrays); ``memory_kd`` gives
cross-attention (the decoder demo). Q, K, V -> scores -> pattern -> z -> ΔE, every step kept.
``attend`` is the core under it that every model family calls (BERT here, Llama in
``attention_core.models``): scores, pattern and z, with grouped key/value heads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from attention_core.core.functional import (
    AttentionSteps,
    attention_steps,
    causal_mask,
    pattern_into,
)
from attention_core.core.whatif import WhatIf

F32 = NDArray[np.float32]


@dataclass(frozen=True)
class AttentionPass:
    """One multi-head attention sub-layer, and the switches it ran under."""

    q_hqe: F32  # queries, from the attending sequence
    k_hke: F32  # keys, from the memory (the same sequence for self-attention)
    v_hke: F32  # values, from the memory
    scores_hqk: F32  # raw Q·Kᵀ
    pattern_hqk: F32  # softmax over keys; hidden entries exactly 0
    z_hqe: F32  # pattern · V
    delta_qd: F32  # Σ_h z_h · W_O,h + b_O, added to the attending sequence
    w_o_hed: F32 = field(repr=False)  # the layer's W_O per head
    whatif: WhatIf = WhatIf()  # the switches it ran under

    @property
    def head_delta_hqd(self) -> F32:
        """Each head's own update z_h · W_O,h (no bias); they sum to delta_qd - b_O."""
        return self.z_hqe @ self.w_o_hed  # [h,q,e] @ [h,e,d] -> [h,q,d]

    def steps(self) -> AttentionSteps:
        """Scores -> scaled -> masked -> pattern, as this pass computed them."""
        return steps_under(self.whatif, self.scores_hqk, self.q_hqe.shape[-1])

    @property
    def allowed_qk(self) -> NDArray[np.bool_]:
        """True where a query may see a key."""
        n_q, n_k = self.scores_hqk.shape[-2:]
        allowed = causal_mask(n_q, n_k) if self.whatif.causal else np.ones((n_q, n_k), bool)
        key_mask_k = self.whatif.key_mask_k(n_k)
        return allowed if key_mask_k is None else allowed & key_mask_k[None, :]


class LayerWeights(Protocol):
    """One attention sub-layer's weights as ``multi_head_attention`` reads them (BERT's
    ``models.bert.weights.LayerWeights``): Q, K, V side by side, W_O whole and per head."""

    @property
    def n_heads(self) -> int: ...
    @property
    def d_head(self) -> int: ...
    @property
    def d_model(self) -> int: ...
    @property
    def w_qkv_dn(self) -> F32: ...  # [d, 3d]: W_Q, W_K, W_V side by side
    @property
    def b_qkv_n(self) -> F32: ...
    @property
    def w_o_dd(self) -> F32: ...
    @property
    def b_o_d(self) -> F32: ...
    @property
    def w_o_hed(self) -> F32: ...


def steps_under(whatif: WhatIf, scores_hqk: F32, d_k: int) -> AttentionSteps:
    """Scores -> scaled -> masked -> pattern under ``whatif``'s switches (its hidden positions
    are the keys')."""
    return attention_steps(
        scores_hqk,
        d_k,
        scale=whatif.scale,
        temperature=whatif.temperature,
        causal=whatif.causal,
        key_mask_k=whatif.key_mask_k(scores_hqk.shape[-1]),
    )


def _check(layer: LayerWeights, x_qd: F32, memory_kd: F32 | None) -> None:
    for name, arr in (("x_qd", x_qd), ("memory_kd", memory_kd)):
        if arr is not None and (arr.ndim != 2 or arr.shape[1] != layer.d_model):
            raise ValueError(f"{name} must be [n, {layer.d_model}], got shape {arr.shape}")


def project(layer: LayerWeights, x_qd: F32, memory_kd: F32 | None = None) -> tuple[F32, F32, F32]:
    """Q from ``x_qd``, K and V from ``memory_kd`` (default ``x_qd``: one fused matmul), as
    views [h, n, e]."""
    h, e, d = layer.n_heads, layer.d_head, layer.d_model
    if memory_kd is None:
        qkv_qn = x_qd @ layer.w_qkv_dn
        qkv_qn += layer.b_qkv_n
        q_hqe, k_hke, v_hke = qkv_qn.reshape(len(x_qd), 3, h, e).transpose(1, 2, 0, 3)
        return q_hqe, k_hke, v_hke  # [q, 3d] -> 3 × [h, q, e]
    q_qd = x_qd @ layer.w_qkv_dn[:, :d] + layer.b_qkv_n[:d]
    kv_kn = memory_kd @ layer.w_qkv_dn[:, d:] + layer.b_qkv_n[d:]
    k_hke, v_hke = kv_kn.reshape(len(memory_kd), 2, h, e).transpose(1, 2, 0, 3)
    return q_qd.reshape(len(x_qd), h, e).transpose(1, 0, 2), k_hke, v_hke


def attend(
    q_hqe: F32,
    k_gke: F32,
    v_gke: F32,
    whatif: WhatIf = WhatIf(),
    out: dict[str, F32] | None = None,
) -> tuple[F32, F32, F32]:
    """The attention core every family calls: scores, pattern and z of ``h`` query heads over
    ``g`` key/value heads (g = h for BERT; GQA when g < h: query head i reads KV head
    i // (h // g)), under ``whatif``'s scale, temperature, causal mask and hidden keys. Returns
    (scores_hqk raw Q·Kᵀ, pattern_hqk, z_hqe); ``out`` may hold "scores", "pattern", "z" arrays
    to write into."""
    h, n_q, e = q_hqe.shape
    g, n_k = k_gke.shape[0], k_gke.shape[1]
    if h % g or v_gke.shape[:2] != (g, n_k) or k_gke.shape[2] != e:
        raise ValueError(
            f"q {q_hqe.shape}, k {k_gke.shape}, v {v_gke.shape}: need [h,q,e], "
            "[g,k,e], [g,k,e'] with g dividing h"
        )
    out = out or {}
    r = h // g  # query heads per KV head: they sit next to each other
    scores_hqk = scores_of(q_hqe, k_gke, _grouped(out, "scores", g))
    pattern_hqk = pattern_into(
        scores_hqk,
        e,
        out.get("pattern", np.empty_like(scores_hqk)),
        scale=whatif.scale,
        temperature=whatif.temperature,
        causal=whatif.causal,
        key_mask_k=whatif.key_mask_k(n_k),
    )
    pattern_gxk = pattern_hqk.reshape(g, r * n_q, n_k)
    z_gxe = np.matmul(pattern_gxk, v_gke, out=_grouped(out, "z", g))  # [g,rq,k] @ [g,k,e]
    z_hqe = z_gxe.reshape(h, n_q, -1)
    return scores_hqk, pattern_hqk, z_hqe


def scores_of(q_hqe: F32, k_gke: F32, out: F32 | None = None) -> F32:
    """Raw Q·Kᵀ of ``h`` query heads over ``g`` KV heads, [h, q, k]: the one computation
    ``attend`` makes, so a trace that recomputes scores later gets the same bits. ``out``:
    [g, r·q, k] to write into."""
    h, n_q, e = q_hqe.shape
    g, n_k = k_gke.shape[0], k_gke.shape[1]
    k_gek = np.ascontiguousarray(k_gke.transpose(0, 2, 1))  # BLAS ~1.5x faster than on a view
    # The r query heads of a group side by side as one matrix: [h,q,e] -> [g, r·q, e], so
    # K is read once per group and never repeated.
    scores_gxk = np.matmul(q_hqe.reshape(g, (h // g) * n_q, e), k_gek, out=out)
    return scores_gxk.reshape(h, n_q, n_k)  # [g,rq,e] @ [g,e,k] -> [g,rq,k] = [h,q,k]


def _grouped(out: dict[str, F32], name: str, g: int) -> F32 | None:
    """out[name] [h, q, x] seen as [g, r·q, x] (a view: the arrays given are C-contiguous)."""
    dest = out.get(name)
    if dest is None:
        return None
    if not dest.flags.c_contiguous:  # a reshape would copy, and the result land in the copy
        raise ValueError(f"out[{name!r}] must be C-contiguous")
    return dest.reshape(g, -1, dest.shape[-1])


def _put(out: dict[str, F32], name: str, value: F32) -> F32:
    """``value`` written into ``out[name]`` when the caller gave that array, else as it is."""
    dest = out.get(name)
    if dest is None:
        return np.ascontiguousarray(value)
    dest[...] = value
    return dest


def multi_head_attention(
    layer: LayerWeights,
    x_qd: F32,
    memory_kd: F32 | None = None,
    *,
    whatif: WhatIf = WhatIf(),
    layer_index: int = 0,
    out: dict[str, F32] | None = None,
) -> AttentionPass:
    """``layer``'s attention, queries from ``x_qd`` [q, d], keys and values from ``memory_kd``
    [k, d] (None: ``x_qd`` itself), under ``whatif`` (its hidden positions are the keys'; the
    heads it knocks out in layer ``layer_index`` have their output z zeroed before W_O, their
    patterns kept). ``out`` may hold arrays to write into, by name ("q", "k", "v", "scores",
    "pattern", "z", "delta"): the forward pass fills its stacks this way."""
    _check(layer, x_qd, memory_kd)
    out = out or {}
    h, e, n_q = layer.n_heads, layer.d_head, len(x_qd)
    q_hqe, k_hke, v_hke = project(layer, x_qd, memory_kd)
    q_hqe, k_hke, v_hke = (_put(out, "q", q_hqe), _put(out, "k", k_hke), _put(out, "v", v_hke))
    scores_hqk, pattern_hqk, z_hqe = attend(q_hqe, k_hke, v_hke, whatif, out)
    z_hqe[list(whatif.knocked_in(layer_index))] = 0.0  # knocked heads pass nothing (none: no-op)
    # Σ_h z_h · W_O,h is one matmul of the heads side by side: [q, h·e] @ [h·e, d]
    z_qx = z_hqe.transpose(1, 0, 2).reshape(n_q, h * e)
    delta_qd = np.matmul(z_qx, layer.w_o_dd, out=out.get("delta"))
    delta_qd += layer.b_o_d
    return AttentionPass(
        q_hqe,
        k_hke,
        v_hke,
        scores_hqk,
        pattern_hqk,
        z_hqe,
        delta_qd,
        layer.w_o_hed,
        whatif,
    )
