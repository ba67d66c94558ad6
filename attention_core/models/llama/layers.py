"""One Llama decoder layer in NumPy, as transformers' ``LlamaDecoderLayer`` computes it.

RMSNorm -> q, k, v (one matmul) -> RoPE (rotate-half) on q and k -> the shared attention core
with grouped KV heads and the causal mask -> W_O -> residual -> RMSNorm -> SwiGLU MLP ->
residual. The attention half returns every intermediate (``LlamaLayer``; the raw scores computed
again when read); the trace keeps only the residual stream and calls ``attention_layer`` again,
with the same inputs, when a page asks for a layer's patterns, so what it shows is bit for bit
what the forward pass computed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, fields

import numpy as np
from numpy.typing import NDArray

from attention_core.core.attention import attend, scores_of
from attention_core.core.config import ModelConfig
from attention_core.core.whatif import WhatIf
from attention_core.models.llama.model import LlamaLayerWeights, LlamaModel

F32 = NDArray[np.float32]


@dataclass(frozen=True)
class LlamaLayer:
    """One layer's attention, every array read-only. KV arrays are per KV head (g of them).
    The raw scores are not held (at 2,048 tokens they are 151 MB a layer, as much as the
    pattern): ``scores_hqk`` computes them again from q and k, with the pass's own function."""

    q_hqe: F32  # queries after RoPE
    k_gke: F32  # keys after RoPE, per KV head (what a KV cache keeps)
    v_gke: F32  # values, per KV head
    pattern_hqk: F32  # softmax under the causal mask (and hidden keys); masked entries 0
    z_hqe: F32  # pattern · V

    @property
    def scores_hqk(self) -> F32:
        """Raw Q·Kᵀ of every head, [h, q, k] (computed: ``core.attention.scores_of``)."""
        return _read_only(scores_of(self.q_hqe, self.k_gke))

    def head(self, name: str, head: int) -> F32:
        """One head's ``name`` array (e.g. "scores_hqk": only that head's Q·Kᵀ is computed)."""
        if name != "scores_hqk":
            return getattr(self, name)[head]
        r = len(self.q_hqe) // len(self.k_gke)
        q_1qe, k_1ke = self.q_hqe[head, None], self.k_gke[head // r, None]
        return _read_only(scores_of(q_1qe, k_1ke)[0])

    @property
    def k_hke(self) -> F32:
        """Keys as each query head reads them (KV head h // (h/g) repeated): a copy."""
        return np.repeat(self.k_gke, len(self.q_hqe) // len(self.k_gke), axis=0)

    @property
    def v_hke(self) -> F32:
        """Values as each query head reads them: a copy."""
        return np.repeat(self.v_gke, len(self.q_hqe) // len(self.v_gke), axis=0)

    def arrays(self) -> list[F32]:
        """The arrays it holds."""
        values = (getattr(self, f.name) for f in fields(self))
        return [value for value in values if isinstance(value, np.ndarray)]

    @property
    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in self.arrays())


@dataclass(frozen=True)
class TracedLayer(LlamaLayer):
    """A layer as the trace holds it: its attention, and its two updates to the stream computed
    the first time one is read (a view of the patterns alone never pays for the MLP: 0.13 s a
    layer at 2,048 tokens), then kept with it. ``changed()`` is told when they are."""

    updates: Callable[[], tuple[F32, F32]] = field(repr=False, compare=False)
    changed: Callable[[], None] = field(repr=False, compare=False)
    _held: list[F32] = field(default_factory=list, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def _updates(self) -> list[F32]:
        with self._lock:
            fresh = not self._held
            if fresh:
                self._held.extend(self.updates())
        if fresh:
            self.changed()
        return self._held

    @property
    def delta_td(self) -> F32:
        """The attention update added to the residual, Σ_h z_h · W_O,h (no bias)."""
        return self._updates()[0]

    @property
    def ffn_td(self) -> F32:
        """The SwiGLU MLP output added to the residual after it."""
        return self._updates()[1]

    def arrays(self) -> list[F32]:
        """The arrays held now: the attention's, and the updates once computed."""
        with self._lock:
            return [*super().arrays(), *self._held]


def _read_only(array: F32) -> F32:
    array.flags.writeable = False
    return array


def layer_nbytes(cfg: ModelConfig, n: int) -> int:
    """Bytes of one layer as a trace holds it: q, k, v, pattern, z (``LlamaLayer``) and the
    layer's two updates to the stream, attention and MLP (``forward.TracedLayer``)."""
    h, g, e, d = cfg.n_heads, cfg.n_kv_heads, cfg.d_head, cfg.d_model
    return 4 * (2 * h * n * e + 2 * g * n * e + h * n * n + 2 * n * d)


def rms_norm(x_td: F32, scale_d: F32, eps: float) -> F32:
    """x / √(mean(x²) + eps) · scale, in float32 as LlamaRMSNorm."""
    var_t1 = np.mean(np.square(x_td), axis=-1, keepdims=True)
    normed = x_td * (np.float32(1.0) / np.sqrt(var_t1 + np.float32(eps)))
    normed *= scale_d
    return normed


def rope_tables(cfg: ModelConfig, positions_t: NDArray[np.int64]) -> tuple[F32, F32]:
    """cos and sin [t, e] for these positions, in float32 as transformers' default RoPE."""
    e = cfg.d_head
    inv_freq = np.float32(1.0) / (
        np.float32(cfg.rope_theta) ** (np.arange(0, e, 2).astype(np.float32) / np.float32(e))
    )
    freqs_tb = positions_t.astype(np.float32)[:, None] * inv_freq[None, :]
    angles_te = np.concatenate([freqs_tb, freqs_tb], axis=-1)
    return np.cos(angles_te), np.sin(angles_te)


def rope(x_hte: F32, cos_te: F32, sin_te: F32) -> F32:
    """x·cos + rotate_half(x)·sin, rotate_half(x) = (-x2, x1) (x1, x2 the two halves)."""
    half = x_hte.shape[-1] // 2
    rotated = np.concatenate([-x_hte[..., half:], x_hte[..., :half]], axis=-1)
    out = x_hte * cos_te
    out += rotated * sin_te
    return out


def project_qkv(
    lay: LlamaLayerWeights, cfg: ModelConfig, x_td: F32, cos_te: F32, sin_te: F32
) -> tuple[F32, F32, F32]:
    """q [h,t,e] and k [g,t,e] after RoPE, v [g,t,e], from the residual stream x_td."""
    t, h, g, e = len(x_td), cfg.n_heads, cfg.n_kv_heads, cfg.d_head
    normed_td = rms_norm(x_td, lay.attn_norm_d, cfg.layer_norm_eps)
    qkv_tn = normed_td @ lay.w_qkv_nd.T  # [t,d] @ [d, (h+2g)·e]
    q_hte = qkv_tn[:, : h * e].reshape(t, h, e).transpose(1, 0, 2)
    k_gte = qkv_tn[:, h * e : (h + g) * e].reshape(t, g, e).transpose(1, 0, 2)
    v_gte = np.ascontiguousarray(qkv_tn[:, (h + g) * e :].reshape(t, g, e).transpose(1, 0, 2))
    return rope(q_hte, cos_te, sin_te), rope(k_gte, cos_te, sin_te), v_gte


def attention_layer(
    lay: LlamaLayerWeights,
    cfg: ModelConfig,
    x_td: F32,
    cos_te: F32,
    sin_te: F32,
    whatif: WhatIf = WhatIf(causal=True),
    layer_index: int = 0,
) -> LlamaLayer:
    """The attention half of layer ``layer_index`` over a whole sequence under ``whatif`` (a
    decoder's is causal), every intermediate kept; the heads it knocks out in this layer have
    their output z zeroed (their patterns stay)."""
    q_hqe, k_gke, v_gke = project_qkv(lay, cfg, x_td, cos_te, sin_te)
    _, pattern, z = attend(q_hqe, k_gke, v_gke, whatif)
    z[list(whatif.knocked_in(layer_index))] = 0.0  # knocked heads pass nothing (none: no-op)
    for array in (q_hqe, k_gke, v_gke, pattern, z):
        array.flags.writeable = False
    return LlamaLayer(q_hqe, k_gke, v_gke, pattern, z)


def delta_of(lay: LlamaLayerWeights, z_hqe: F32, out: F32 | None = None) -> F32:
    """Σ_h z_h · W_O,h: the heads side by side through o_proj, [t, d] (into ``out`` if given)."""
    h, t, e = z_hqe.shape
    z_tx = z_hqe.transpose(1, 0, 2).reshape(t, h * e)  # [h,t,e] -> [t, h·e]
    return np.matmul(z_tx, lay.w_o_dx.T, out=out)


def mlp(lay: LlamaLayerWeights, cfg: ModelConfig, resid_td: F32, out: F32 | None = None) -> F32:
    """down(silu(gate(x)) · up(x)) of the RMSNormed residual (into ``out`` if given)."""
    f = cfg.d_ff
    gate_up_tn = rms_norm(resid_td, lay.mlp_norm_d, cfg.layer_norm_eps) @ lay.w_gate_up_nd.T
    gate_tf, up_tf = gate_up_tn[:, :f], gate_up_tn[:, f:]
    act_tf = np.negative(gate_tf)  # SiLU(g) = g / (1 + exp(-g)), in place after one copy
    np.exp(act_tf, out=act_tf)
    act_tf += np.float32(1.0)
    np.divide(gate_tf, act_tf, out=act_tf)
    act_tf *= up_tf
    return np.matmul(act_tf, lay.w_down_df.T, out=out)


def logits(model: LlamaModel, final_td: F32) -> F32:
    """LM-head logits of final-normed rows: the tied embedding, [t, vocab]."""
    return final_td @ model.params.embed_vd.T  # [t,d] @ [d,v]
