"""The model's weights as frozen dataclasses: one per encoder layer, one for the embeddings.

The checkpoint stores each weight under a name (``encoder.layer.3.attention.self.query.weight``)
and, as torch's Linear does, as [out, in]. Everything that computes reads the weights from here,
laid out once per model as [in, out] C-contiguous arrays (``x @ w``; a transposed view costs the
matmul ~10 %), so the names are written only in this module. Every array is read-only: one model
serves every visitor.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass, field, fields

import numpy as np
from numpy.typing import NDArray

from attention_core.core.functional import gram_lhee

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
    gram_lhee: F32 = field(init=False, repr=False)  # W_O,h · W_O,hᵀ: the value norms' matrices

    def __post_init__(self) -> None:
        object.__setattr__(self, "gram_lhee", gram_lhee(self.w_o_lhed))

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
        yield self.gram_lhee


def _arrays(obj: object) -> Iterator[F32]:
    for f in fields(obj):  # type: ignore[arg-type]  # only called on the dataclasses above
        value = getattr(obj, f.name)
        if isinstance(value, np.ndarray):
            yield value
        elif isinstance(value, Norm):
            yield from (value.gamma_d, value.beta_d)


class _Reader:
    """Takes the checkpoint's tensors by name, and notes each matrix laid out [in, out]."""

    def __init__(self, tensors: MutableMapping[str, F32]) -> None:
        self.tensors = tensors
        self.laid: dict[str, F32] = {}  # checkpoint name -> its [in, out] array here

    def get(self, name: str) -> F32:
        if name not in self.tensors:
            raise MissingWeights(name)
        return self.tensors[name].view()  # its own flags: read-only later, the checkpoint's not

    def linear(self, name: str) -> tuple[F32, F32]:  # torch's [out, in] -> [in, out]
        self.laid[f"{name}.weight"] = np.ascontiguousarray(self.get(f"{name}.weight").T)
        return self.laid[f"{name}.weight"], self.get(f"{name}.bias")

    def norm(self, name: str) -> Norm:
        return Norm(self.get(f"{name}.weight"), self.get(f"{name}.bias"))

    def layer(self, layer: int) -> tuple[F32, dict[str, F32 | Norm]]:
        """One layer: its W_O [in, out], and every other LayerWeights field by name."""
        pre = f"encoder.layer.{layer}"
        att = f"{pre}.attention"
        qkv_names = [f"{att}.self.{n}" for n in ("query", "key", "value")]
        qkv = [self.linear(name) for name in qkv_names]
        w_qkv = np.concatenate([w for w, _ in qkv], axis=1)
        d = w_qkv.shape[0]
        for i, name in enumerate(qkv_names):
            self.laid[f"{name}.weight"] = w_qkv[:, i * d : (i + 1) * d]
        w_o, b_o = self.linear(f"{att}.output.dense")
        w_in, b_in = self.linear(f"{pre}.intermediate.dense")
        w_out, b_out = self.linear(f"{pre}.output.dense")
        return w_o, dict(
            w_qkv_dn=w_qkv,
            b_qkv_n=np.concatenate([b for _, b in qkv]),
            b_o_d=b_o,
            attn_norm=self.norm(f"{att}.output.LayerNorm"),
            w_in_df=w_in,
            b_in_f=b_in,
            w_out_fd=w_out,
            b_out_d=b_out,
            out_norm=self.norm(f"{pre}.output.LayerNorm"),
        )


def lay_out(tensors: MutableMapping[str, F32], n_layers: int, n_heads: int) -> Weights:
    """Lay the checkpoint's named tensors out as ``Weights``; MissingWeights names a gap. Each
    weight is then held once: the [out, in] matrices in ``tensors`` are replaced by views
    (transposed back) of the laid-out arrays, which saves a copy of every matrix (~45 MB)."""
    read, emb = _Reader(tensors), "embeddings"
    embeddings = EmbeddingWeights(
        read.get(f"{emb}.word_embeddings.weight"),
        read.get(f"{emb}.position_embeddings.weight"),
        read.get(f"{emb}.token_type_embeddings.weight")[0],
        read.norm(f"{emb}.LayerNorm"),
    )
    w_o_list, parts = zip(*(read.layer(layer) for layer in range(n_layers)), strict=True)
    # Every layer's W_O in one stack (each trace shares it); the layers' W_O are views into it.
    w_o_lhed = np.stack([w.reshape(n_heads, -1, w.shape[1]) for w in w_o_list])
    layers = []
    for layer, kwargs in enumerate(parts):
        w_o = w_o_lhed[layer].reshape(-1, w_o_lhed.shape[-1])
        read.laid[f"encoder.layer.{layer}.attention.output.dense.weight"] = w_o
        layers.append(LayerWeights(n_heads=n_heads, w_o_dd=w_o, **kwargs))
    weights = Weights(embeddings, tuple(layers), w_o_lhed)
    for array in weights.arrays():
        array.flags.writeable = False
    for name, array in read.laid.items():
        tensors[name] = array.T
    return weights
