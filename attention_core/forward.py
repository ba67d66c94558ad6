"""The BERT encoder forward pass in NumPy, keeping every intermediate of every layer and head.

Follows the model exactly (post-LayerNorm BERT as in transformers' ``BertModel``), so its patterns
and hidden states match ``output_attentions`` / ``output_hidden_states`` to float32 precision.
The what-if switches (causal mask, √d_k scaling, temperature, hidden tokens) apply to every layer
of the pass.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from attention_core.functional import (
    AttentionSteps,
    attention_steps,
    gelu_into,
    layer_norm,
    layer_norm_into,
    pattern_into,
)
from attention_core.model import Model, ModelConfig
from attention_core.tokens import Tokens, tokenize

F32 = NDArray[np.float32]


def _is_position(p: object) -> bool:
    return bool(isinstance(p, int | np.integer) and not isinstance(p, bool) and p >= 0)


@dataclass(frozen=True)
class WhatIf:
    """Switches that change how attention is computed; the defaults are the trained model."""

    causal: bool = False  # hide later tokens from each query (decoder-style masking)
    scale: bool = True  # divide scores by √d_k before softmax
    temperature: float = 1.0  # divide the logits by this before softmax (> 0)
    hidden: tuple[int, ...] = ()  # token positions no query may see: their keys masked everywhere

    def __post_init__(self) -> None:
        # Sorted and without repeats, so that equal switches are equal (and hash equal) as the
        # cache key they are used as.
        flat = not isinstance(self.hidden, str) and np.ndim(np.asarray(self.hidden, object)) == 1
        items = list(self.hidden) if flat else [None]
        if not all(map(_is_position, items)):
            raise ValueError(f"hidden must be a tuple of token positions >= 0, got {self.hidden!r}")
        object.__setattr__(self, "hidden", tuple(sorted({int(p) for p in items if p is not None})))

    def key_mask_k(self, n_tokens: int) -> NDArray[np.bool_] | None:
        """True for the keys every query may see, False for hidden ones; None if none is hidden.

        A hidden token still computes its own row as a query (as in transformers when its
        ``attention_mask`` is 0): it is hidden from every token, itself included.
        """
        if not self.hidden:
            return None
        if self.hidden[-1] >= n_tokens:
            raise ValueError(f"hidden positions {self.hidden} out of range for {n_tokens} tokens")
        if len(self.hidden) == n_tokens:
            raise ValueError(f"cannot hide all {n_tokens} tokens: no query would see anything")
        mask_k = np.ones(n_tokens, dtype=bool)
        mask_k[list(self.hidden)] = False
        return mask_k


@dataclass(frozen=True)
class Trace:
    """Every intermediate of one forward pass. Rows of a pattern are queries, columns keys."""

    tokens: Tokens
    config: ModelConfig
    whatif: WhatIf
    word_td: F32  # word (token) embeddings
    position_td: F32  # learned position embeddings
    token_type_td: F32  # segment embeddings (type 0)
    embed_sum_td: F32  # word + position + token type, before LayerNorm
    q_lhqe: F32  # queries per head
    k_lhke: F32  # keys per head
    v_lhke: F32  # values per head
    scores_lhqk: F32  # raw Q·Kᵀ, before scaling and masking
    pattern_lhqk: F32  # softmax attention weights (rows sum to 1)
    z_lhqe: F32  # pattern · V, per head
    w_o_lhed: F32  # each head's slice of the output projection W_O (head_delta = z_h · W_O,h)
    delta_ltd: F32  # attention update ΔE added to the residual: Σ_h head_delta + b_O
    attn_out_ltd: F32  # LayerNorm(resid + ΔE), the feed-forward's input
    ffn_hidden_ltf: F32  # GELU activations inside the feed-forward
    ffn_out_ltd: F32  # feed-forward output before the second residual add
    hidden_ltd: F32  # [n_layers + 1] layer outputs; hidden_ltd[0] is the LayerNormed embedding
    sentence_embedding_d: F32  # pooled (and normalized) sentence vector, as sentence-transformers

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)

    @property
    def head_delta_lhtd(self) -> F32:
        """Each head's own update, z_h through its slice of W_O (no bias): computed when asked,
        not stored, as it would be the trace's largest array (h·d numbers per token per layer)."""
        return self.z_lhqe @ self.w_o_lhed  # [l,h,t,e] @ [l,h,e,d] -> [l,h,t,d]

    def head_delta_hd(self, layer: int, token: int) -> F32:
        """What every head of ``layer`` proposes to add to ``token``'s vector, [head, d]."""
        z_h1e = self.z_lhqe[layer, :, token, None, :]
        return (z_h1e @ self.w_o_lhed[layer])[:, 0]  # [h,1,e] @ [h,e,d] -> [h,d]

    def steps(self, layer: int, head: int) -> AttentionSteps:
        """Scores -> scaled -> masked -> pattern for one head, under this trace's switches."""
        return attention_steps(
            self.scores_lhqk[layer, head],
            self.config.d_head,
            scale=self.whatif.scale,
            temperature=self.whatif.temperature,
            causal=self.whatif.causal,
            key_mask_k=self.whatif.key_mask_k(self.n_tokens),
        )


def _linear(x: F32, weights: dict[str, F32], name: str) -> F32:
    # torch.nn.Linear stores [out, in]
    return x @ weights[f"{name}.weight"].T + weights[f"{name}.bias"]


def _split_heads(x_td: F32, n_heads: int) -> F32:
    t, d = x_td.shape
    return x_td.reshape(t, n_heads, d // n_heads).transpose(1, 0, 2)  # [t,d] -> [h,t,e]


def embed(model: Model, input_ids_t: NDArray[np.int64]) -> tuple[F32, F32, F32, F32, F32]:
    """Word, position and token-type embeddings, their sum, and the LayerNormed sum."""
    w, cfg = model.weights, model.config
    word_td = w["embeddings.word_embeddings.weight"][input_ids_t]
    position_td = w["embeddings.position_embeddings.weight"][: len(input_ids_t)]
    token_type_td = np.broadcast_to(w["embeddings.token_type_embeddings.weight"][0], word_td.shape)
    sum_td = word_td + position_td + token_type_td
    gamma, beta = w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"]
    return (
        word_td,
        position_td,
        token_type_td,
        sum_td,
        layer_norm(sum_td, gamma, beta, cfg.layer_norm_eps),
    )


def pool(model: Model, hidden_td: F32, keep_t: NDArray[np.bool_] | None = None) -> F32:
    """Sentence embedding from the last layer: mean (or [CLS]) pooling, then L2 norm.

    ``keep_t`` marks the tokens the mean covers (all by default); hidden tokens are left out, as
    sentence-transformers' mean pooling leaves out tokens whose attention_mask is 0.
    """
    kept_td = hidden_td if keep_t is None else hidden_td[keep_t]
    pooled = hidden_td[0] if model.config.pooling == "cls" else kept_td.mean(axis=0)
    return pooled / max(np.linalg.norm(pooled), 1e-12) if model.config.normalize else pooled


@dataclass(frozen=True)
class _LayerLayout:
    """One layer's weights laid out for the pass: [in, out] C-contiguous (torch stores [out, in],
    and a transposed view costs the matmul ~10%), with Q, K and V fused into one matmul."""

    w_qkv_dn: F32  # [d, 3d]: columns are W_Qᵀ, W_Kᵀ, W_Vᵀ
    b_qkv_n: F32
    w_o_dd: F32  # W_Oᵀ, rows are the heads' z features in order
    b_o_d: F32
    w_in_df: F32
    b_in_f: F32
    w_out_fd: F32
    b_out_d: F32
    norms: tuple[F32, F32, F32, F32]  # attention LayerNorm γ, β; output LayerNorm γ, β


@dataclass(frozen=True)
class _Layout:
    layers: tuple[_LayerLayout, ...]
    w_o_lhed: F32  # read-only, shared by every trace of the model (it does not depend on input)


# Model is frozen but holds a dict, so it is unhashable: key by id, and drop the entry when the
# model is collected (so a new model at a recycled id never finds a stale layout).
_LAYOUTS: dict[int, _Layout] = {}


def _layout(model: Model) -> _Layout:
    got = _LAYOUTS.get(id(model))
    if got is None:
        got = _LAYOUTS[id(model)] = _build_layout(model)
        weakref.finalize(model, _LAYOUTS.pop, id(model), None)
    return got


def _build_layout(model: Model) -> _Layout:
    w, cfg = model.weights, model.config
    layers = []
    for layer in range(cfg.n_layers):
        pre = f"encoder.layer.{layer}"
        att, ln = f"{pre}.attention", "LayerNorm"
        qkv = [f"{att}.self.{n}" for n in ("query", "key", "value")]
        layers.append(_LayerLayout(
            w_qkv_dn=np.ascontiguousarray(np.concatenate([w[f"{n}.weight"] for n in qkv]).T),
            b_qkv_n=np.concatenate([w[f"{n}.bias"] for n in qkv]),
            w_o_dd=np.ascontiguousarray(w[f"{att}.output.dense.weight"].T),
            b_o_d=w[f"{att}.output.dense.bias"],
            w_in_df=np.ascontiguousarray(w[f"{pre}.intermediate.dense.weight"].T),
            b_in_f=w[f"{pre}.intermediate.dense.bias"],
            w_out_fd=np.ascontiguousarray(w[f"{pre}.output.dense.weight"].T),
            b_out_d=w[f"{pre}.output.dense.bias"],
            norms=(w[f"{att}.output.{ln}.weight"], w[f"{att}.output.{ln}.bias"],
                   w[f"{pre}.output.{ln}.weight"], w[f"{pre}.output.{ln}.bias"]),
        ))  # fmt: skip
    w_o_lhed = np.stack(
        [lay.w_o_dd.reshape(cfg.n_heads, cfg.d_head, cfg.d_model) for lay in layers]
    )
    w_o_lhed.flags.writeable = False
    return _Layout(tuple(layers), w_o_lhed)


def _allocate(cfg: ModelConfig, n: int) -> dict[str, F32]:
    """The trace's stacked [l, ...] arrays, filled layer by layer in place (no lists + np.stack)."""
    n_l, h, e, d, f = cfg.n_layers, cfg.n_heads, cfg.d_head, cfg.d_model, cfg.d_ff
    shapes = {
        "q": (n_l, h, n, e), "k": (n_l, h, n, e), "v": (n_l, h, n, e), "scores": (n_l, h, n, n),
        "pattern": (n_l, h, n, n), "z": (n_l, h, n, e), "delta": (n_l, n, d),
        "attn_out": (n_l, n, d), "ffn_hidden": (n_l, n, f), "ffn_out": (n_l, n, d),
        "hidden": (n_l + 1, n, d),
    }  # fmt: skip
    return {key: np.empty(shape, np.float32) for key, shape in shapes.items()}


def _attention_into(
    lay: _LayerLayout, cfg: ModelConfig, x_td: F32, whatif: WhatIf, out: dict[str, F32], layer: int
) -> None:
    """Self-attention of one layer into ``out[...][layer]``: q, k, v, scores, pattern, z, delta."""
    t, h, e = len(x_td), cfg.n_heads, cfg.d_head
    qkv_td3 = x_td @ lay.w_qkv_dn
    qkv_td3 += lay.b_qkv_n
    qkv_xhte = qkv_td3.reshape(t, 3, h, e).transpose(1, 2, 0, 3)  # [t, 3d] -> [3, h, t, e]
    for i, key in enumerate(("q", "k", "v")):
        out[key][layer] = qkv_xhte[i]
    q_hqe, k_hke, v_hke = out["q"][layer], out["k"][layer], out["v"][layer]
    k_hek = np.ascontiguousarray(k_hke.transpose(0, 2, 1))  # BLAS ~1.5x faster than on a view
    scores_hqk = np.matmul(q_hqe, k_hek, out=out["scores"][layer])
    pattern_hqk = pattern_into(
        scores_hqk, e, out["pattern"][layer], scale=whatif.scale,
        temperature=whatif.temperature, causal=whatif.causal, key_mask_k=whatif.key_mask_k(t),
    )  # fmt: skip
    z_hqe = np.matmul(pattern_hqk, v_hke, out=out["z"][layer])
    # Σ_h z_h · W_O,h is one matmul of the heads side by side: [t, h·e] @ [h·e, d]
    z_tx = z_hqe.transpose(1, 0, 2).reshape(t, h * e)
    delta_td = np.matmul(z_tx, lay.w_o_dd, out=out["delta"][layer])
    delta_td += lay.b_o_d


def _block_into(lay: _LayerLayout, cfg: ModelConfig, out: dict[str, F32], layer: int) -> None:
    """The rest of the layer: residual + LayerNorm, feed-forward, residual + LayerNorm."""
    x_td, eps, (g1, b1, g2, b2) = out["hidden"][layer], cfg.layer_norm_eps, lay.norms
    attn_out_td = np.add(x_td, out["delta"][layer], out=out["attn_out"][layer])
    layer_norm_into(attn_out_td, g1, b1, eps, attn_out_td)
    pre_tf = attn_out_td @ lay.w_in_df
    pre_tf += lay.b_in_f
    hidden_tf = gelu_into(pre_tf, out["ffn_hidden"][layer])
    ffn_out_td = np.matmul(hidden_tf, lay.w_out_fd, out=out["ffn_out"][layer])
    ffn_out_td += lay.b_out_d
    next_td = np.add(attn_out_td, ffn_out_td, out=out["hidden"][layer + 1])
    layer_norm_into(next_td, g2, b2, eps, next_td)


def run_model(model: Model, tokens: Tokens, whatif: WhatIf = WhatIf()) -> Trace:
    """The full forward pass over ``tokens``, keeping every intermediate."""
    layout, cfg = _layout(model), model.config
    word, position, token_type, embed_sum, x_td = embed(model, tokens.input_ids_t)
    out = _allocate(cfg, len(tokens))
    out["hidden"][0] = x_td
    for layer, lay in enumerate(layout.layers):
        _attention_into(lay, cfg, out["hidden"][layer], whatif, out, layer)
        _block_into(lay, cfg, out, layer)
    return Trace(
        tokens=tokens, config=cfg, whatif=whatif,
        word_td=word, position_td=position, token_type_td=np.ascontiguousarray(token_type),
        embed_sum_td=embed_sum,
        q_lhqe=out["q"], k_lhke=out["k"], v_lhke=out["v"],
        scores_lhqk=out["scores"], pattern_lhqk=out["pattern"], z_lhqe=out["z"],
        w_o_lhed=layout.w_o_lhed, delta_ltd=out["delta"],
        attn_out_ltd=out["attn_out"], ffn_hidden_ltf=out["ffn_hidden"],
        ffn_out_ltd=out["ffn_out"], hidden_ltd=out["hidden"],
        sentence_embedding_d=pool(model, out["hidden"][-1], whatif.key_mask_k(len(tokens))),
    )  # fmt: skip


def trace_sentence(
    model: Model, text: str, whatif: WhatIf = WhatIf(), max_tokens: int | None = None
) -> Trace:
    """Tokenize ``text`` and run the pass. The sentence embedding follows sentence-transformers:
    past its ``max_seq_length`` (256 for MiniLM) it pools a pass over the first tokens only."""
    tokens = tokenize(model, text, max_tokens)
    trace = run_model(model, tokens, whatif)
    limit = model.config.max_seq_length
    if len(tokens) <= limit:
        return trace
    short = run_model(model, tokenize(model, text, limit), _hidden_in_window(whatif, trace, limit))
    return replace(trace, sentence_embedding_d=short.sentence_embedding_d)


def _hidden_in_window(whatif: WhatIf, trace: Trace, limit: int) -> WhatIf:
    """The hidden positions of a long pass, carried to its first ``limit`` tokens: the window
    keeps positions below ``limit - 1`` and moves the final [SEP] to ``limit - 1``."""
    kept = [p for p in whatif.hidden if p < limit - 1]
    if trace.n_tokens - 1 in whatif.hidden:
        kept.append(limit - 1)
    return replace(whatif, hidden=tuple(kept))
