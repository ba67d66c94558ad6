"""The guided tour's own arithmetic: every number a tour step shows that the trace does not hold.

A query recomputed from the layer's input and weights, a repeated word's two vectors, the
sentence padded with [PAD] tokens with and without the padding mask, what ÷√d_k does to a
how much weight heads park on [CLS]/[SEP], how far a token's vector turns per block, where two
uses of one word part ways, and where the time of a layer goes (attention vs dense layers). What
÷√d_k does to a head's scores and to softmax's gradient is ``lessons.saturation``'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attention_core.core.attention import multi_head_attention, project
from attention_core.core.config import ModelConfig
from attention_core.core.family import Trace
from attention_core.core.functional import attention_steps, gelu, softmax
from attention_core.core.tokens import Tokens
from attention_core.core.whatif import WhatIf
from attention_core.methods.geometry import cosine
from attention_core.models.bert.forward import Trace as BertTrace
from attention_core.models.bert.forward import embed
from attention_core.models.bert.model import Model
from attention_core.models.bert.weights import LayerWeights

F32 = NDArray[np.float32]
F64 = NDArray[np.float64]
SPLIT_SIZES: tuple[int, ...] = (16, 32, 64, 128, 256, 512)  # token counts timed per layer


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


@dataclass(frozen=True)
class QueryRecompute:
    """One token's query in one head, rebuilt as x·W_Q + b_Q from the weights."""

    x_d: F32  # the token's vector entering the layer
    w_de: F32  # this head's columns of W_Q, [d_model, d_head]
    b_e: F32  # this head's slice of the query bias
    q_e: F32  # x·W_Q + b_Q, summed in float64


def query_from_weights(model: Model, layer: int, head: int, x_d: F32) -> QueryRecompute:
    """Recompute head ``head``'s query of layer ``layer`` for the input vector ``x_d``."""
    cfg = model.config
    if not (0 <= layer < cfg.n_layers and 0 <= head < cfg.n_heads):
        raise ValueError(f"layer {layer} / head {head} out of range")
    if x_d.shape != (cfg.d_model,):
        raise ValueError(f"x_d must have shape ({cfg.d_model},), got {x_d.shape}")
    weights = model.params.layer(layer)
    w_de, b_e = weights.w_q_hde[head], weights.b_q_he[head]
    q_e = (x_d.astype(np.float64) @ w_de + b_e).astype(np.float32)
    return QueryRecompute(x_d, w_de, b_e, q_e)


@dataclass(frozen=True)
class RepeatedWord:
    """The first word piece that occurs twice: one static vector, two contextual ones."""

    first: int  # its first position
    second: int  # its second position
    static_cos: float  # cosine of the two static (lookup) vectors: 1
    context_cos: float  # cosine of the two vectors after the last layer


def repeated_word(trace: Trace) -> RepeatedWord | None:
    """The first repeated non-special token of the trace, or None if no piece repeats."""
    ids, special = trace.tokens.input_ids_t, trace.tokens.special_t
    for i in np.flatnonzero(~special):
        twins = np.flatnonzero((ids == ids[i]) & ~special)
        if twins.size > 1 and twins[0] == i:
            j = int(twins[1])
            static = float(cosine(trace.word_td[i], trace.word_td[j]))
            context = float(cosine(trace.hidden_ltd[-1, i], trace.hidden_ltd[-1, j]))
            return RepeatedWord(int(i), j, static, context)
    return None


@dataclass(frozen=True)
class Padding:
    """The first layer on the sentence plus [PAD] tokens, without and with the padding mask."""

    tokens: tuple[str, ...]  # the sentence's tokens, then the [PAD] tokens
    n_real: int  # tokens of the sentence itself
    free_hqk: F32  # pattern when the [PAD] keys are visible
    masked_hqk: F32  # pattern when the padding mask hides them
    leak_hq: F32  # weight each real query puts on [PAD] without the mask
    masked_leak_hq: F32  # the same with the mask: exactly 0
    gap: float  # largest |masked pattern − the unpadded sentence's pattern| over real rows


def padding_demo(model: Model, trace: BertTrace, n_pad: int) -> Padding:
    """Pad ``trace``'s sentence with ``n_pad`` [PAD] tokens (fewer when the model's longest
    input is reached) and run the first layer twice."""
    n = trace.n_tokens
    n_pad = min(n_pad, model.config.n_positions - n)
    x_td, key_mask_k = padded_input(model, trace.tokens, n_pad)
    first = model.params.layer(0)
    free = multi_head_attention(first, x_td).pattern_hqk
    padding = WhatIf(hidden=tuple(int(i) for i in np.flatnonzero(~key_mask_k)))
    masked = multi_head_attention(first, x_td, whatif=padding).pattern_hqk
    gap = float(np.abs(masked[:, :n, :n] - trace.pattern_lhqk[0]).max())
    leak, masked_leak = (p[:, :n, n:].sum(axis=-1) for p in (free, masked))
    tokens = (*trace.tokens.tokens, *["[PAD]"] * n_pad)
    return Padding(tokens, n, free, masked, leak, masked_leak, gap)


def shift_gap(scaled_k: NDArray[np.floating], shift: float) -> float:
    """Largest change of a softmax row when a constant is added to every score."""
    x = np.asarray(scaled_k, dtype=np.float64)
    return float(np.abs(softmax(x) - softmax(x + shift)).max())


def special_share(trace: Trace, layer: int) -> F64:
    """Per head of ``layer``: the weight a real token's row puts on [CLS] and [SEP], averaged
    over the real tokens (the sentence's own rows, not the markers')."""
    special = trace.tokens.special_t
    rows = trace.pattern_lhqk[layer][:, ~special].astype(np.float64)
    return rows[..., special].sum(axis=-1).mean(axis=-1)


@dataclass(frozen=True)
class Drift:
    """How one token's vector turns on its way through the stack."""

    step_cos_l: F64  # per block l: cosine of the vectors entering and leaving it
    static_cos_s: F64  # per hidden state s (0 = embedding): cosine with the static vector


def drift(trace: Trace, token: int) -> Drift:
    """Cosines of ``token``'s hidden states: consecutive ones, and each with its static vector."""
    h = trace.hidden_ltd[:, token]
    step = np.array([cosine(h[s], h[s + 1]) for s in range(len(h) - 1)], dtype=np.float64)
    static = np.array([cosine(trace.word_td[token], v) for v in h], dtype=np.float64)
    return Drift(step, static)


@dataclass(frozen=True)
class Parting:
    """One word piece in two sentences: the cosine of its two vectors, state by state."""

    cos_s: F64  # static vectors, hidden state 0 (embedding, positions added), after each layer

    @property
    def drop_l(self) -> F64:
        """Per layer l: how much the cosine falls across it (negative: it rises)."""
        return self.cos_s[1:-1] - self.cos_s[2:]

    @property
    def largest_drop(self) -> int:
        """The layer across which the cosine falls most."""
        return int(np.argmax(self.drop_l))


def parting(a: Trace, ia: int, b: Trace, ib: int) -> Parting:
    """Token ``ia`` of ``a`` against token ``ib`` of ``b``: static vectors, then every state."""
    pairs = [(a.word_td[ia], b.word_td[ib])]
    pairs += [(a.hidden_ltd[s, ia], b.hidden_ltd[s, ib]) for s in range(len(a.hidden_ltd))]
    return Parting(np.array([cosine(x, y) for x, y in pairs], dtype=np.float64))


def weight_counts(weights: LayerWeights) -> tuple[int, int]:
    """Learned numbers of one layer's attention (W_Q, W_K, W_V, W_O and their biases) and of its
    feed-forward network (both matrices and biases); the LayerNorms' few are left out."""
    attention = (weights.w_qkv_dn, weights.b_qkv_n, weights.w_o_dd, weights.b_o_d)
    dense = (weights.w_in_df, weights.b_in_f, weights.w_out_fd, weights.b_out_d)
    return sum(a.size for a in attention), sum(a.size for a in dense)


def crossover_tokens(cfg: ModelConfig) -> int:
    """Length where a layer's attention multiply-adds (2·n²·d) equal its dense layers'
    (4·n·d² for W_Q, W_K, W_V, W_O plus 2·n·d·d_ff for the feed-forward): n = 2d + d_ff."""
    return 2 * cfg.d_model + cfg.d_ff


def layer_flops(cfg: ModelConfig, n: int) -> tuple[int, int]:
    """Multiply-adds of one layer at ``n`` tokens: (attention, dense layers)."""
    return 2 * n * n * cfg.d_model, 4 * n * cfg.d_model**2 + 2 * n * cfg.d_model * cfg.d_ff


@dataclass(frozen=True)
class SplitPoint:
    """One layer timed at one length, split into its two kinds of work."""

    n_tokens: int
    attention_s: float  # Q·Kᵀ, softmax and pattern·V, all heads
    dense_s: float  # Q, K, V and output projections, and the feed-forward

    @property
    def attention_share(self) -> float:
        return self.attention_s / (self.attention_s + self.dense_s)


def _best_of(repeats: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def measure_split(
    model: Model, sizes: tuple[int, ...] = SPLIT_SIZES, repeats: int = 3, layer: int = 0
) -> tuple[SplitPoint, ...]:
    """Time one layer's attention and dense work at each length (best of ``repeats``), on
    random inputs: the time depends on the shapes, not on the numbers."""
    cfg, weights = model.config, model.params.layer(layer)
    rng, points = np.random.default_rng(0), []
    for n in sizes:
        x_td = rng.standard_normal((n, cfg.d_model)).astype(np.float32)
        q, k, v = project(weights, x_td)

        def attention(q: F32 = q, k: F32 = k, v: F32 = v) -> None:
            steps = attention_steps(q @ k.transpose(0, 2, 1), cfg.d_head)  # [h,q,e]@[h,e,k]
            _ = steps.pattern @ v  # [h,q,k] @ [h,k,e] -> [h,q,e]

        def dense(x_td: F32 = x_td, w: LayerWeights = weights) -> None:
            _ = x_td @ w.w_qkv_dn + w.b_qkv_n
            _ = x_td @ w.w_o_dd + w.b_o_d
            _ = gelu(x_td @ w.w_in_df + w.b_in_f) @ w.w_out_fd + w.b_out_d

        points.append(SplitPoint(n, _best_of(repeats, attention), _best_of(repeats, dense)))
    return tuple(points)
