"""The BERT encoder forward pass in NumPy, keeping every intermediate of every layer and head.

Follows the model exactly (post-LayerNorm BERT as in transformers' ``BertModel``), so its patterns
and hidden states match ``output_attentions`` / ``output_hidden_states`` to float32 precision.
The what-if switches (causal mask, √d_k scaling, temperature, hidden tokens) apply to every layer
of the pass.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from attention_core.functional import AttentionSteps, attention_steps, gelu, layer_norm
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


def attention_layer(model: Model, layer: int, x_td: F32, whatif: WhatIf) -> dict[str, F32]:
    """Self-attention of one layer: q, k, v, scores, pattern, z, W_O per head, delta."""
    w, cfg = model.weights, model.config
    pre = f"encoder.layer.{layer}.attention"
    q_hqe = _split_heads(_linear(x_td, w, f"{pre}.self.query"), cfg.n_heads)
    k_hke = _split_heads(_linear(x_td, w, f"{pre}.self.key"), cfg.n_heads)
    v_hke = _split_heads(_linear(x_td, w, f"{pre}.self.value"), cfg.n_heads)
    scores_hqk = q_hqe @ k_hke.transpose(0, 2, 1)  # [h,q,e] @ [h,e,k] -> [h,q,k]
    steps = attention_steps(
        scores_hqk, cfg.d_head, scale=whatif.scale, temperature=whatif.temperature,
        causal=whatif.causal, key_mask_k=whatif.key_mask_k(len(x_td)),
    )  # fmt: skip
    z_hqe = steps.pattern @ v_hke  # [h,q,k] @ [h,k,e] -> [h,q,e]
    w_o_hed = w[f"{pre}.output.dense.weight"].T.reshape(cfg.n_heads, cfg.d_head, cfg.d_model)
    head_delta_htd = z_hqe @ w_o_hed  # [h,t,e] @ [h,e,d] -> [h,t,d]
    delta_td = head_delta_htd.sum(axis=0) + w[f"{pre}.output.dense.bias"]
    return {
        "q": q_hqe, "k": k_hke, "v": v_hke, "scores": scores_hqk, "pattern": steps.pattern,
        "z": z_hqe, "w_o": w_o_hed, "delta": delta_td,
    }  # fmt: skip


def feed_forward(model: Model, layer: int, x_td: F32) -> tuple[F32, F32]:
    """GELU hidden activations and the feed-forward output (before the residual add)."""
    pre = f"encoder.layer.{layer}"
    hidden_tf = gelu(_linear(x_td, model.weights, f"{pre}.intermediate.dense"))
    return hidden_tf, _linear(hidden_tf, model.weights, f"{pre}.output.dense")


def _post_norm(model: Model, name: str, x_td: F32) -> F32:
    w = model.weights
    return layer_norm(x_td, w[f"{name}.weight"], w[f"{name}.bias"], model.config.layer_norm_eps)


def pool(model: Model, hidden_td: F32, keep_t: NDArray[np.bool_] | None = None) -> F32:
    """Sentence embedding from the last layer: mean (or [CLS]) pooling, then L2 norm.

    ``keep_t`` marks the tokens the mean covers (all by default); hidden tokens are left out, as
    sentence-transformers' mean pooling leaves out tokens whose attention_mask is 0.
    """
    kept_td = hidden_td if keep_t is None else hidden_td[keep_t]
    pooled = hidden_td[0] if model.config.pooling == "cls" else kept_td.mean(axis=0)
    return pooled / max(np.linalg.norm(pooled), 1e-12) if model.config.normalize else pooled


def run_model(model: Model, tokens: Tokens, whatif: WhatIf = WhatIf()) -> Trace:
    """The full forward pass over ``tokens``, keeping every intermediate."""
    word, position, token_type, embed_sum, x_td = embed(model, tokens.input_ids_t)
    layers, hidden = [], [x_td]
    for layer in range(model.config.n_layers):
        attn = attention_layer(model, layer, x_td, whatif)
        attn_out = _post_norm(
            model, f"encoder.layer.{layer}.attention.output.LayerNorm", x_td + attn["delta"]
        )
        ffn_hidden, ffn_out = feed_forward(model, layer, attn_out)
        x_td = _post_norm(model, f"encoder.layer.{layer}.output.LayerNorm", attn_out + ffn_out)
        layers.append({**attn, "attn_out": attn_out, "ffn_hidden": ffn_hidden, "ffn_out": ffn_out})
        hidden.append(x_td)
    stack = {key: np.stack([lay[key] for lay in layers]) for key in layers[0]}
    return Trace(
        tokens=tokens, config=model.config, whatif=whatif,
        word_td=word, position_td=position, token_type_td=np.ascontiguousarray(token_type),
        embed_sum_td=embed_sum,
        q_lhqe=stack["q"], k_lhke=stack["k"], v_lhke=stack["v"],
        scores_lhqk=stack["scores"], pattern_lhqk=stack["pattern"], z_lhqe=stack["z"],
        w_o_lhed=stack["w_o"], delta_ltd=stack["delta"],
        attn_out_ltd=stack["attn_out"], ffn_hidden_ltf=stack["ffn_hidden"],
        ffn_out_ltd=stack["ffn_out"], hidden_ltd=np.stack(hidden),
        sentence_embedding_d=pool(model, x_td, whatif.key_mask_k(len(tokens))),
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
