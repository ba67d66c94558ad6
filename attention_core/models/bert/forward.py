"""The BERT encoder forward pass in NumPy, keeping every intermediate of every layer and head.

Follows the model exactly (post-LayerNorm BERT as in transformers' ``BertModel``), so its patterns
and hidden states match ``output_attentions`` / ``output_hidden_states`` to float32 precision.
The what-if switches (causal mask, √d_k scaling, temperature, hidden tokens) apply to every layer
of the pass.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import NDArray

from attention_core.core.attention import AttentionPass, multi_head_attention, steps_under
from attention_core.core.buffers import buffer_nbytes, float32_views
from attention_core.core.config import ModelConfig
from attention_core.core.functional import (
    AttentionSteps,
    gelu_into,
    layer_norm,
    layer_norm_into,
    value_norms_gram,
)
from attention_core.core.tokens import Tokens, window_tokens
from attention_core.core.whatif import WhatIf
from attention_core.models.bert.model import Model
from attention_core.models.bert.tokenizer import tokenize_bert
from attention_core.models.bert.weights import LayerWeights

F32 = NDArray[np.float32]


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
    value_norm_lhk: F32  # ‖v_k · W_O,h‖: how far each key token can move a query (norm_weighted)
    delta_ltd: F32  # attention update ΔE added to the residual: Σ_h head_delta + b_O
    attn_out_ltd: F32  # LayerNorm(resid + ΔE), the feed-forward's input
    ffn_hidden_ltf: F32  # GELU activations inside the feed-forward
    ffn_out_ltd: F32  # feed-forward output before the second residual add
    hidden_ltd: F32  # [n_layers + 1] layer outputs; hidden_ltd[0] is the LayerNormed embedding
    # The sentence vector (sentence_embedding_d) once known; None until first asked for when
    # it needs a pass of its own (a text past max_seq_length), which ``window`` runs.
    pooled_d: F32 | None
    window: Callable[[], F32] | None = field(default=None, repr=False, compare=False)

    @property
    def sentence_embedding_d(self) -> F32:
        """The pooled (and normalized) sentence vector, as sentence-transformers gives it. Past
        its ``max_seq_length`` (256 for MiniLM) it pools a pass over the first tokens only:
        that pass (~120 ms at 256 tokens) runs the first time the vector is asked for, not as
        part of the trace, since the pages that show only the heads never use it."""
        if self.pooled_d is None:
            if self.window is None:
                raise ValueError("this trace has no sentence vector and no way to compute it")
            pooled = self.window()
            pooled.flags.writeable = False
            object.__setattr__(self, "pooled_d", pooled)  # computed once, then kept
            return pooled
        return self.pooled_d

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
        return steps_under(self.whatif, self.scores_lhqk[layer, head], self.config.d_head)


def embed(model: Model, input_ids_t: NDArray[np.int64]) -> tuple[F32, F32, F32, F32, F32]:
    """Word, position and token-type embeddings, their sum, and the LayerNormed sum."""
    emb = model.params.embeddings
    word_td = emb.word_vd[input_ids_t]
    position_td = emb.position_pd[: len(input_ids_t)]
    token_type_td = np.broadcast_to(emb.token_type_d, word_td.shape)
    sum_td = word_td + position_td + token_type_td
    normed_td = layer_norm(sum_td, emb.norm.gamma_d, emb.norm.beta_d, model.config.layer_norm_eps)
    return word_td, position_td, token_type_td, sum_td, normed_td


def pool(model: Model, hidden_td: F32, keep_t: NDArray[np.bool_] | None = None) -> F32:
    """Sentence embedding from the last layer: mean (or [CLS]) pooling, then L2 norm.

    ``keep_t`` marks the tokens the mean covers (all by default); hidden tokens are left out, as
    sentence-transformers' mean pooling leaves out tokens whose attention_mask is 0.
    """
    kept_td = hidden_td if keep_t is None else hidden_td[keep_t]
    pooled = hidden_td[0] if model.config.pooling == "cls" else kept_td.mean(axis=0)
    return pooled / max(np.linalg.norm(pooled), 1e-12) if model.config.normalize else pooled


ATTENTION_PARTS = ("q", "k", "v", "scores", "pattern", "z", "delta")


def _shapes(cfg: ModelConfig, n: int) -> dict[str, tuple[int, ...]]:
    """The shapes of a trace's stacked [l, ...] arrays for ``n`` tokens."""
    n_l, h, e, d, f = cfg.n_layers, cfg.n_heads, cfg.d_head, cfg.d_model, cfg.d_ff
    return {
        "q": (n_l, h, n, e),
        "k": (n_l, h, n, e),
        "v": (n_l, h, n, e),
        "scores": (n_l, h, n, n),
        "pattern": (n_l, h, n, n),
        "z": (n_l, h, n, e),
        "value_norm": (n_l, h, n),
        "delta": (n_l, n, d),
        "attn_out": (n_l, n, d),
        "ffn_hidden": (n_l, n, f),
        "ffn_out": (n_l, n, d),
        "hidden": (n_l + 1, n, d),
    }


def _allocate(cfg: ModelConfig, n: int) -> dict[str, F32]:
    """The trace's stacked [l, ...] arrays, filled layer by layer in place (no lists + np.stack),
    as views of one buffer that a later pass reuses once the trace is gone (``buffers``)."""
    return float32_views(_shapes(cfg, n))


def bert_trace_nbytes(cfg: ModelConfig, n_tokens: int) -> int:
    """Bytes of the arrays of a ``Trace`` of ``n_tokens`` tokens, before it is computed (the
    shared W_O included, as a trace holds it): 235 MB at 512 tokens, 1.5 MB at 12."""
    n, d, h, e = n_tokens, cfg.d_model, cfg.n_heads, cfg.d_head
    floats = 4 * n * d + d  # word, position, token type, their sum; the sentence embedding
    floats += cfg.n_layers * h * e * d  # w_o_lhed
    stacked = buffer_nbytes(_shapes(cfg, n))  # the layers' arrays, in one buffer
    return stacked + 4 * floats + n * (8 + 16 + 1)  # tokens: ids, offsets, special flags


def _block_into(lay: LayerWeights, cfg: ModelConfig, out: dict[str, F32], layer: int) -> None:
    """The rest of the layer: residual + LayerNorm, feed-forward, residual + LayerNorm."""
    x_td, eps, n1, n2 = out["hidden"][layer], cfg.layer_norm_eps, lay.attn_norm, lay.out_norm
    attn_out_td = np.add(x_td, out["delta"][layer], out=out["attn_out"][layer])
    layer_norm_into(attn_out_td, n1.gamma_d, n1.beta_d, eps, attn_out_td)
    pre_tf = attn_out_td @ lay.w_in_df
    pre_tf += lay.b_in_f
    hidden_tf = gelu_into(pre_tf, out["ffn_hidden"][layer])
    ffn_out_td = np.matmul(hidden_tf, lay.w_out_fd, out=out["ffn_out"][layer])
    ffn_out_td += lay.b_out_d
    next_td = np.add(attn_out_td, ffn_out_td, out=out["hidden"][layer + 1])
    layer_norm_into(next_td, n2.gamma_d, n2.beta_d, eps, next_td)


def _attend(
    lay: LayerWeights, x_td: F32, whatif: WhatIf, layer: int, out: dict[str, F32] | None = None
) -> AttentionPass:
    """Layer ``layer``'s self-attention over ``x_td`` under the what-ifs (into ``out``'s arrays)."""
    return multi_head_attention(lay, x_td, whatif=whatif, layer_index=layer, out=out)


def run_bert(model: Model, tokens: Tokens, whatif: WhatIf = WhatIf()) -> Trace:
    """The full forward pass over ``tokens``, keeping every intermediate."""
    params, cfg, n = model.params, model.config, len(tokens)
    whatif.check_heads(cfg.n_layers, cfg.n_heads)
    whatif.check_tokens(n)
    word, position, token_type, embed_sum, x_td = embed(model, tokens.input_ids_t)
    out = _allocate(cfg, n)
    out["hidden"][0] = x_td
    for layer, lay in enumerate(params.layers):
        parts = {name: out[name][layer] for name in ATTENTION_PARTS}
        _attend(lay, out["hidden"][layer], whatif, layer, parts)
        out["value_norm"][layer] = value_norms_gram(out["v"][layer], params.gram_lhee[layer])
        _block_into(lay, cfg, out, layer)
    return Trace(
        tokens=tokens,
        config=cfg,
        whatif=whatif,
        word_td=word,
        position_td=position,
        token_type_td=np.ascontiguousarray(token_type),
        embed_sum_td=embed_sum,
        q_lhqe=out["q"],
        k_lhke=out["k"],
        v_lhke=out["v"],
        scores_lhqk=out["scores"],
        pattern_lhqk=out["pattern"],
        z_lhqe=out["z"],
        w_o_lhed=params.w_o_lhed,
        value_norm_lhk=out["value_norm"],
        delta_ltd=out["delta"],
        attn_out_ltd=out["attn_out"],
        ffn_hidden_ltf=out["ffn_hidden"],
        ffn_out_ltd=out["ffn_out"],
        hidden_ltd=out["hidden"],
        pooled_d=pool(model, out["hidden"][-1], whatif.key_mask_k(len(tokens))),
    )


def trace_bert(
    model: Model, text: str, whatif: WhatIf = WhatIf(), max_tokens: int | None = None
) -> Trace:
    """Tokenize ``text`` and run the pass. The sentence embedding follows sentence-transformers:
    past its ``max_seq_length`` (256 for MiniLM) it pools a pass over the first tokens only."""
    tokens = tokenize_bert(model, text, max_tokens)
    trace = run_bert(model, tokens, whatif)
    limit = model.config.max_seq_length
    if len(tokens) <= limit:
        return trace
    short, hidden = window_tokens(tokens, limit), _hidden_in_window(whatif, trace, limit)
    return replace(trace, pooled_d=None, window=lambda: _embedding_only(model, short, hidden))


def _embedding_only(model: Model, tokens: Tokens, whatif: WhatIf) -> F32:
    """``run_bert(model, tokens, whatif).sentence_embedding_d``, bit for bit, from a pass that
    keeps nothing else: one layer's arrays at a time, reused layer after layer."""
    cfg, n, d = model.config, len(tokens), model.config.d_model
    shapes = {"hidden": (2, n, d), "attn_out": (1, n, d), "ffn_hidden": (1, n, cfg.d_ff)}
    out = {
        key: np.empty(shape, np.float32) for key, shape in {**shapes, "ffn_out": (1, n, d)}.items()
    }
    x_td = embed(model, tokens.input_ids_t)[4]
    for layer, lay in enumerate(model.params.layers):
        out["hidden"][0] = x_td
        out["delta"] = _attend(lay, x_td, whatif, layer).delta_qd[None]
        _block_into(lay, cfg, out, 0)
        x_td = out["hidden"][1]
    return pool(model, x_td, whatif.key_mask_k(n))


def _hidden_in_window(whatif: WhatIf, trace: Trace, limit: int) -> WhatIf:
    """The hidden positions of a long pass, carried to its first ``limit`` tokens: the window
    keeps positions below ``limit - 1`` and moves the final [SEP] to ``limit - 1``."""
    kept = [p for p in whatif.hidden if p < limit - 1]
    if trace.n_tokens - 1 in whatif.hidden:
        kept.append(limit - 1)
    return replace(whatif, hidden=tuple(kept))
