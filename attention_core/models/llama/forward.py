"""The Llama forward pass over a sentence, and its trace: the residual stream held, each layer's
attention recomputed when asked.

A 2,048-token SmolLM2 pass has 30 × 9 × 2,048² patterns (4.5 GB in float32, as much again for
the scores): far too much to hold per visitor. ``LlamaTrace`` keeps the hidden states entering
each layer (146 MB at 2,048 tokens), the value norms, the length of each layer's attention
update, and the next-token top 10, and computes a layer's q, k, v, pattern, z and its two
updates to the stream (attention ΔE and the MLP's) from ``hidden_ltd[l]`` with the functions
the pass itself ran, so they are bit for bit the pass's own (``TracedLayer``; the raw scores are
computed from q and k when read). A small LRU (by bytes, at least one layer) keeps the layers
last asked for: a 2,048-token trace holds ≤ 355 MB with its one layer and its rollout.
``trace.pattern_lhqk[l]``, ``trace.delta_ltd[l]`` and friends are ``LayerStack``s: indexing one
layer computes one layer; ``np.asarray`` computes all of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import cast

import numpy as np
from numpy.typing import NDArray

from attention_core.core.attention import steps_under
from attention_core.core.buffers import buffer_nbytes, float32_views
from attention_core.core.config import ModelConfig
from attention_core.core.family import N_TOP
from attention_core.core.functional import (
    AttentionSteps,
    softmax,
    top_k_blocked,
    value_norms_gram,
)
from attention_core.core.pooling import held_nbytes
from attention_core.core.progress import report
from attention_core.core.tokens import Tokens
from attention_core.core.whatif import WhatIf
from attention_core.models.llama.cache import LayerCache
from attention_core.models.llama.cache import LayerStack as LayerStack
from attention_core.models.llama.layers import (
    LlamaLayer,
    TracedLayer,
    attention_layer,
    delta_of,
    layer_nbytes,
    logits,
    mlp,
    rms_norm,
    rope_tables,
)
from attention_core.models.llama.model import LlamaModel
from attention_core.models.llama.rerun import next_probs_from

F32 = NDArray[np.float32]
F64 = NDArray[np.float64]
LRU_BYTES = 48_000_000  # the layer cache's budget: 1 layer at 1,024+ tokens, 3 at 512, 22 at 128
_LOGIT_ROWS = 128  # LM-head rows at a time: 128 × 49,152 logits is 25 MB, not 100 (fewer
# blocks re-read the 113 MB embedding more often: 64 rows took 1.5x as long)


def lru_layers(cfg: ModelConfig, n: int) -> int:
    """How many layers the trace's cache keeps for ``n`` tokens."""
    return max(1, min(cfg.n_layers, LRU_BYTES // layer_nbytes(cfg, n)))


@dataclass(frozen=True, eq=False)
class LlamaTrace:
    """A decoder pass: the residual stream held, each layer's attention on demand. The names and
    shapes follow the BERT ``Trace`` wherever the meaning is the same. ``hidden_ltd`` is
    transformers' ``output_hidden_states``: [l] enters layer l, [n_layers] is after the final
    RMSNorm. ``whatif.causal`` is always True: a decoder's own mask cannot be switched off."""

    tokens: Tokens
    config: ModelConfig
    whatif: WhatIf  # causal forced on
    hidden_ltd: F32  # [l+1, t, d]
    delta_norm_lt: F64  # ‖ΔE‖ of each layer's attention update per token (float64)
    value_norm_lhk: F32  # ‖v_k · W_O,h‖ per layer, query head and key (norm_weighted)
    _cache: LayerCache = field(repr=False)

    @property
    def next_top_ids_tk(self) -> NDArray[np.int64]:
        """Each position's 10 likeliest next tokens (computed when first read: the LM head is
        49,152 rows, and a page of attention patterns never reads them)."""
        return cast(NDArray[np.int64], self._next_top()[0])

    @property
    def next_top_probs_tk(self) -> F32:
        """Their probabilities (float32 softmax of the logits)."""
        return cast(F32, self._next_top()[1])

    def _next_top(self) -> tuple[NDArray[np.generic], ...]:
        names = ("next_top_ids_tk", "next_top_probs_tk")
        return self._cache.derived_all(names, lambda: next_top(self.model, self.hidden_ltd[-1]))

    @property
    def model(self) -> LlamaModel:
        return self._cache.model

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)

    @property
    def word_td(self) -> F32:
        """Token embeddings (the stream entering layer 0: Llama adds no position vector)."""
        return self.hidden_ltd[0]

    @property
    def w_o_lhed(self) -> F32:
        return self.model.params.w_o_lhed

    def layer(self, index: int) -> LlamaLayer:
        """Layer ``index``'s attention arrays (computed, or from the cache)."""
        if not 0 <= index < self.config.n_layers:
            raise ValueError(f"layer {index} is outside 0..{self.config.n_layers - 1}")
        return self._cache(index)

    def _stack(self, name: str, heads: int, last: int) -> LayerStack:
        cfg, n = self.config, self.n_tokens
        return LayerStack(self._cache, name, (cfg.n_layers, heads, n, last))

    @property
    def delta_ltd(self) -> LayerStack:
        """Each layer's attention update ΔE added to the residual, Σ_h z_h · W_O,h (no bias)."""
        cfg = self.config
        return LayerStack(self._cache, "delta_td", (cfg.n_layers, self.n_tokens, cfg.d_model))

    @property
    def ffn_out_ltd(self) -> LayerStack:
        """Each layer's SwiGLU MLP output added to the residual."""
        cfg = self.config
        return LayerStack(self._cache, "ffn_td", (cfg.n_layers, self.n_tokens, cfg.d_model))

    @property
    def q_lhqe(self) -> LayerStack:
        return self._stack("q_hqe", self.config.n_heads, self.config.d_head)

    @property
    def k_lhke(self) -> LayerStack:
        return self._stack("k_hke", self.config.n_heads, self.config.d_head)

    @property
    def v_lhke(self) -> LayerStack:
        return self._stack("v_hke", self.config.n_heads, self.config.d_head)

    @property
    def k_lgke(self) -> LayerStack:
        return self._stack("k_gke", self.config.n_kv_heads, self.config.d_head)

    @property
    def v_lgke(self) -> LayerStack:
        return self._stack("v_gke", self.config.n_kv_heads, self.config.d_head)

    @property
    def scores_lhqk(self) -> LayerStack:
        return self._stack("scores_hqk", self.config.n_heads, self.n_tokens)

    @property
    def pattern_lhqk(self) -> LayerStack:
        return self._stack("pattern_hqk", self.config.n_heads, self.n_tokens)

    @property
    def z_lhqe(self) -> LayerStack:
        return self._stack("z_hqe", self.config.n_heads, self.config.d_head)

    def memo(self, name: str, compute: Callable[[], F32]) -> F32:
        """``compute()`` once per trace, then kept (and counted in ``nbytes``)."""
        return self._cache.derived(name, compute)

    def head_delta_hd(self, layer: int, token: int) -> F32:
        """What every head of ``layer`` proposes to add to ``token``'s vector, [head, d]."""
        z_h1e = self.layer(layer).z_hqe[:, token, None, :]
        return (z_h1e @ self.w_o_lhed[layer])[:, 0]  # [h,1,e] @ [h,e,d] -> [h,d]

    def steps(self, layer: int, head: int) -> AttentionSteps:
        """Scores -> scaled -> masked -> pattern for one head (the causal mask always on)."""
        return steps_under(self.whatif, self.layer(layer).scores_hqk[head], self.config.d_head)

    def next_probs_v(self, position: int) -> F32:
        """The whole next-token distribution after ``position`` (float32 softmax)."""
        if not 0 <= position < self.n_tokens:
            raise ValueError(f"position {position} is outside 0..{self.n_tokens - 1}")
        return self.next_probs_tv(position, position + 1)[0]

    def next_probs_tv(self, start: int, stop: int) -> F32:
        """The next-token distributions after positions ``start`` .. ``stop - 1`` [t, vocab]."""
        if not 0 <= start < stop <= self.n_tokens:
            raise ValueError(f"positions {start}..{stop - 1} are outside 0..{self.n_tokens - 1}")
        return softmax(logits(self.model, self.hidden_ltd[-1][start:stop]))

    def unembed_top(self, x_pd: F32, normed: bool) -> tuple[NDArray[np.int64], F32]:
        """The 10 likeliest next tokens of residual rows ``x_pd``, after the final RMSNorm unless
        ``normed`` (the stream after the last layer already is)."""
        if not normed:
            x_pd = rms_norm(x_pd, self.model.params.final_norm_d, self.config.layer_norm_eps)
        return next_top(self.model, x_pd)

    def next_probs_from(self, layer: int, resid_btd: F32, position: int) -> F32:
        """Next-token distributions at ``position`` of variants whose stream after ``layer``'s
        attention is ``resid_btd`` (``models.llama.rerun``)."""
        return next_probs_from(self.model, self.whatif, layer, resid_btd, position)

    def token_text(self, token_id: int) -> str:
        return str(self.model.tokenizer.decode([token_id]))

    @property
    def nbytes(self) -> int:
        """Bytes held now: the stream's buffer (hidden states and value norms, its pool size
        class), the other stored arrays and the layers and derived arrays in the cache (the
        next-token top 10 once read)."""
        stream = buffer_nbytes(_stream_shapes(self.config, self.n_tokens))
        return stream + self.delta_norm_lt.nbytes + self._cache.nbytes


def next_top(model: LlamaModel, final_td: F32) -> tuple[NDArray[np.int64], F32]:
    """Every position's top-10 next tokens and their probabilities (float32, as ``softmax``
    computes them: exp(logit - max) / Σ), a block of rows at a time."""
    ids, probs = [], []
    for i in range(0, len(final_td), _LOGIT_ROWS):
        exp_tv = logits(model, final_td[i : i + _LOGIT_ROWS])
        exp_tv -= exp_tv.max(axis=-1, keepdims=True)
        np.exp(exp_tv, out=exp_tv)
        top_ids, top_exp = top_k_blocked(exp_tv, N_TOP)
        ids.append(top_ids)
        probs.append(top_exp / exp_tv.sum(axis=-1, keepdims=True))
    return np.concatenate(ids), np.concatenate(probs)


def run_llama(
    model: LlamaModel, tokens: Tokens, whatif: WhatIf, keep_layers: bool = False
) -> LlamaTrace:
    """The pass over ``tokens`` under ``whatif`` (scale, temperature, hidden keys; always
    causal), reporting each layer done to ``core.progress``. ``keep_layers`` keeps every layer
    the pass computed in the cache (tests)."""
    cfg, params, n = model.config, model.params, len(tokens)
    whatif = replace(whatif, causal=True)
    whatif.check_heads(cfg.n_layers, cfg.n_heads)
    whatif.check_tokens(n)
    key_mask_k = whatif.key_mask_k(n)
    cos_te, sin_te = rope_tables(cfg, np.arange(n))
    # one buffer, reused once the trace is gone (attention_core.core.buffers)
    hidden, norms = float32_views(_stream_shapes(cfg, n)).values()
    hidden[0] = params.embed_vd[tokens.input_ids_t]
    delta_norms = np.empty((cfg.n_layers, n))

    def updates(layer: int, z_hqe: F32) -> tuple[F32, F32]:
        lay = params.layers[layer]
        delta_td = delta_of(lay, z_hqe)
        ffn_td = mlp(lay, cfg, hidden[layer] + delta_td)
        delta_td.flags.writeable = ffn_td.flags.writeable = False
        return delta_td, ffn_td

    def compute(layer: int) -> TracedLayer:
        lay = params.layers[layer]
        attn = attention_layer(lay, cfg, hidden[layer], cos_te, sin_te, whatif, layer)
        attention = {f.name: getattr(attn, f.name) for f in fields(attn)}
        return TracedLayer(
            **attention,
            updates=lambda: updates(layer, attn.z_hqe),
            changed=lambda: cache.changed(),
        )

    # A short text's layers all fit the cache: kept as the pass computes them, so a page
    # reading every layer (the header's head roles) computes none again.
    keep_layers = keep_layers or lru_layers(cfg, n) >= cfg.n_layers
    kept = (cos_te, sin_te) if key_mask_k is None else (cos_te, sin_te, key_mask_k)
    cache = LayerCache(model, compute, cfg.n_layers if keep_layers else lru_layers(cfg, n), kept)
    with np.errstate(over="ignore"):  # SiLU's exp(-x) of a very negative x: inf, giving -0
        for i in range(cfg.n_layers):
            lay = cast(TracedLayer, cache(i)) if keep_layers else compute(i)
            norms[i] = value_norms_gram(lay.v_gke, params.gram_lhee[i])
            delta_norms[i] = np.linalg.norm(lay.delta_td.astype(np.float64), axis=-1)
            np.add(hidden[i] + lay.delta_td, lay.ffn_td, out=hidden[i + 1])
            report(i + 1, cfg.n_layers)
    hidden[-1] = rms_norm(hidden[-1], params.final_norm_d, cfg.layer_norm_eps)
    for array in (hidden, delta_norms, norms):
        array.flags.writeable = False
    return LlamaTrace(tokens, cfg, whatif, hidden, delta_norms, norms, cache)


def _stream_shapes(cfg: ModelConfig, n: int) -> dict[str, tuple[int, ...]]:
    """The residual stream a trace keeps: hidden states and value norms."""
    return {
        "hidden": (cfg.n_layers + 1, n, cfg.d_model),
        "norms": (cfg.n_layers, cfg.n_heads, n),
    }


def llama_trace_nbytes(cfg: ModelConfig, n: int) -> int:
    """Bytes a ``LlamaTrace`` of ``n`` tokens holds at most: the hidden states, the norms, the
    next-token top 10, the tokens, its layer cache full and its rollout (whole up to 512 tokens,
    pooled beyond: ``core.pooling``): 355 MB at 2,048 tokens, 115 MB at 512."""
    stream = buffer_nbytes(_stream_shapes(cfg, n)) + 8 * cfg.n_layers * n
    tops, rope = n * N_TOP * (8 + 4), 2 * 4 * n * cfg.d_head  # + the cos/sin tables it keeps
    layers = lru_layers(cfg, n) * layer_nbytes(cfg, n)
    return stream + tops + rope + n * (8 + 16 + 1) + layers + held_nbytes(n, cfg.n_layers)
