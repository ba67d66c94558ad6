"""The model's weights as frozen dataclasses: one per encoder layer, one for the embeddings.

The checkpoint stores each weight under a name (``encoder.layer.3.attention.self.query.weight``)
and, as torch's Linear does, as [out, in]. Everything that computes reads the weights from here,
laid out once per model as [in, out] C-contiguous arrays (``x @ w``; a transposed view costs the
matmul ~10 %), so the names are written only in this module. Every array is read-only: one model
serves every visitor.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields

import numpy as np
from numpy.typing import NDArray

F32 = NDArray[np.float32]


class MissingWeights(KeyError):
    """The checkpoint lacks a weight the forward pass needs (``args[0]`` names it)."""


@dataclass(frozen=True)
class Norm:
    """A LayerNorm's scale and shift."""

    gamma_d: F32
    beta_d: F32


@dataclass(frozen=True)
class EmbeddingWeights:
    """The lookup tables summed into the first hidden state, and their LayerNorm."""

    word_vd: F32  # one row per vocabulary entry
    position_pd: F32  # one learned row per position
    token_type_d: F32  # the segment-0 row (every token of one sentence is segment 0)
    norm: Norm


@dataclass(frozen=True)
class LayerWeights:
    """One encoder layer. W_Q, W_K and W_V sit side by side in one [d, 3·d] matrix, so that
    self-attention projects all three in one matmul; the properties are views of it per head."""

    n_heads: int
    w_qkv_dn: F32  # [d, 3·d]: columns are W_Q, then W_K, then W_V
    b_qkv_n: F32  # [3·d]: b_Q, b_K, b_V
    w_o_dd: F32  # W_O: rows are the heads' z features, head by head
    b_o_d: F32  # b_O, added once to the heads' summed update
    attn_norm: Norm  # LayerNorm(x + ΔE)
    w_in_df: F32  # feed-forward, d -> f
    b_in_f: F32
    w_out_fd: F32  # feed-forward, f -> d
    b_out_d: F32
    out_norm: Norm  # LayerNorm(attention output + feed-forward output)

    @property
    def d_model(self) -> int:
        return int(self.w_o_dd.shape[1])

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    def _per_head(self, i: int) -> F32:  # i-th of Q, K, V as [h, d, e] (a view)
        d, h, e = self.d_model, self.n_heads, self.d_head
        return self.w_qkv_dn[:, i * d : (i + 1) * d].reshape(d, h, e).transpose(1, 0, 2)

    @property
    def w_q_hde(self) -> F32:
        return self._per_head(0)

    @property
    def w_k_hde(self) -> F32:
        return self._per_head(1)

    @property
    def w_v_hde(self) -> F32:
        return self._per_head(2)

    @property
    def b_q_he(self) -> F32:
        return self.b_qkv_n[: self.d_model].reshape(self.n_heads, self.d_head)

    @property
    def w_o_hed(self) -> F32:
        """Each head's slice of W_O: head h's update is z_h @ w_o_hed[h]."""
        return self.w_o_dd.reshape(self.n_heads, self.d_head, self.d_model)


@dataclass(frozen=True)
class Weights:
    """All the weights the forward pass reads."""

    embeddings: EmbeddingWeights
    layers: tuple[LayerWeights, ...]
    w_o_lhed: F32  # every layer's W_O per head, stacked: each trace of the model shares it

    def layer(self, index: int) -> LayerWeights:
        """Layer ``index``'s weights; ValueError names the range when it is outside."""
        if not 0 <= index < len(self.layers):
            raise ValueError(f"layer {index} is outside 0..{len(self.layers) - 1}")
        return self.layers[index]

    def arrays(self) -> Iterator[F32]:
        """Every array held, once each."""
        yield from _arrays(self.embeddings)
        for layer in self.layers:
            yield from _arrays(layer)
        yield self.w_o_lhed


def _arrays(obj: object) -> Iterator[F32]:
    for f in fields(obj):  # type: ignore[arg-type]  # only called on the dataclasses above
        value = getattr(obj, f.name)
        if isinstance(value, np.ndarray):
            yield value
        elif isinstance(value, Norm):
            yield from (value.gamma_d, value.beta_d)


def lay_out(tensors: Mapping[str, F32], n_layers: int, n_heads: int) -> Weights:
    """Lay the checkpoint's named tensors out as ``Weights``; MissingWeights names a gap."""

    def get(name: str) -> F32:
        if name not in tensors:
            raise MissingWeights(name)
        return tensors[name].view()  # its own flags: made read-only below, the checkpoint's not

    def linear(name: str) -> tuple[F32, F32]:  # torch's [out, in] -> [in, out]
        return np.ascontiguousarray(get(f"{name}.weight").T), get(f"{name}.bias")

    def norm(name: str) -> Norm:
        return Norm(get(f"{name}.weight"), get(f"{name}.bias"))

    emb = "embeddings"
    embeddings = EmbeddingWeights(
        get(f"{emb}.word_embeddings.weight"), get(f"{emb}.position_embeddings.weight"),
        get(f"{emb}.token_type_embeddings.weight")[0], norm(f"{emb}.LayerNorm"),
    )  # fmt: skip
    layers = []
    for layer in range(n_layers):
        pre = f"encoder.layer.{layer}"
        att = f"{pre}.attention"
        qkv = [linear(f"{att}.self.{n}") for n in ("query", "key", "value")]
        w_o, b_o = linear(f"{att}.output.dense")
        w_in, b_in = linear(f"{pre}.intermediate.dense")
        w_out, b_out = linear(f"{pre}.output.dense")
        w_qkv = np.concatenate([w for w, _ in qkv], axis=1)
        b_qkv = np.concatenate([b for _, b in qkv])
        layers.append(LayerWeights(
            n_heads, w_qkv, b_qkv,
            w_o, b_o, norm(f"{att}.output.LayerNorm"), w_in, b_in, w_out, b_out,
            norm(f"{pre}.output.LayerNorm"),
        ))  # fmt: skip
    w_o_lhed = np.stack([lw.w_o_hed for lw in layers])
    weights = Weights(embeddings, tuple(layers), w_o_lhed)
    for array in weights.arrays():
        array.flags.writeable = False
    return weights
