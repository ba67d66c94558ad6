"""Pure NumPy building blocks: softmax, LayerNorm, GELU and the four steps of an attention pattern.

Every function here works on any leading dimensions and keeps the input dtype (float32 by default).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.floating]


def softmax(x: Array, axis: int = -1) -> Array:
    """Numerically stable softmax. -inf entries get exactly 0; an all -inf row gives all zeros."""
    return softmax_into(x, np.empty_like(x), axis)


def softmax_into(x: Array, out: Array, axis: int = -1, row_max: Array | None = None) -> Array:
    """softmax(x) written into ``out`` (which may be ``x`` itself), so the forward pass fills its
    preallocated pattern array without a temporary of the same size. ``row_max``, when the
    caller has it, must be x's finite maximum along ``axis`` (keepdims): it saves a pass."""
    if row_max is None:
        row_max = np.max(x, axis=axis, keepdims=True)
    if not np.isfinite(row_max).all():
        # +inf would make inf - inf = nan: clamp it to the largest finite value; all -inf rows
        # subtract 0 instead, so they stay -inf, exp to 0 and divide to 0 below.
        x = np.minimum(x, np.finfo(x.dtype).max)
        row_max = np.max(x, axis=axis, keepdims=True)
        row_max = np.where(np.isfinite(row_max), row_max, 0)
    with np.errstate(over="ignore"):  # x - max below float32's range is -inf: exp gives 0
        np.subtract(x, row_max, out=out)
    np.exp(out, out=out)
    total = np.sum(out, axis=axis, keepdims=True)
    live = total > 0
    if live.all():
        return np.divide(out, total, out=out)
    np.divide(out, total, out=out, where=live)
    np.copyto(out, 0, where=~live)  # rows with nothing to share (all masked, or nan) give zeros
    return out


def layer_norm(x: Array, gamma: Array, beta: Array, eps: float = 1e-12) -> Array:
    """LayerNorm over the last axis, as BERT computes it (biased variance)."""
    return layer_norm_into(x, gamma, beta, eps, np.empty_like(x))


def layer_norm_into(x: Array, gamma: Array, beta: Array, eps: float, out: Array) -> Array:
    """LayerNorm of ``x`` into ``out`` (may be ``x``), centred and scaled in place. The variance
    is the mean of squares (pairwise summation): an einsum dot product drifts further from
    torch's, and this array is small next to the matmuls."""
    mean = x.mean(axis=-1, keepdims=True)
    centred = np.subtract(x, mean, out=out)
    var = np.square(centred).mean(axis=-1, keepdims=True)
    centred /= np.sqrt(var + x.dtype.type(eps))
    centred *= gamma
    centred += beta
    return centred


# Numerical Recipes' Chebyshev fit of erfc: relative error < 1.2e-7 everywhere, at float32
# resolution, so the exact-erf GELU needs no SciPy import on the app's start-up path.
_ERFC_COEFFS = (
    0.17087277,
    -0.82215223,
    1.48851587,
    -1.13520398,
    0.27886807,
    -0.18628806,
    0.09678418,
    0.37409196,
    1.00002368,
    -1.26551223,
)
# Elements per GELU block, so its temporaries stay in the L2 cache (measured at 512 x 1536:
# 4096 -> 6.3 ms, 16384 -> 3.7, 65536 -> 3.0, whole array -> 3.0 ms; smaller is call overhead).
GELU_CHUNK = 65536


def _erfc_abs(z: Array, out: Array) -> Array:
    """erfc(z) for z >= 0 into ``out``, every step in place (the Horner loop is ten passes)."""
    one = z.dtype.type(1)
    t = np.multiply(z, z.dtype.type(0.5))
    t += one
    np.divide(one, t, out=t)
    poly = np.multiply(t, z.dtype.type(_ERFC_COEFFS[0]), out=out)
    poly += z.dtype.type(_ERFC_COEFFS[1])
    for c in _ERFC_COEFFS[2:]:
        poly *= t
        poly += z.dtype.type(c)
    poly -= z * z
    np.exp(poly, out=poly)
    poly *= t
    return poly


def gelu(x: Array) -> Array:
    """GELU with the exact erf form (BERT's "gelu"), in the input's precision."""
    return gelu_into(x, np.empty_like(x))


def gelu_into(x: Array, out: Array) -> Array:
    """GELU of ``x`` into ``out`` (same shape, C-contiguous, not ``x`` itself), a block at a time
    so that its temporaries stay in the cache.

    x·Φ(x) = max(x, 0) - |x|/2 · erfc(|x|/√2): both signs in one expression without a select,
    and erfc of a non-negative argument keeps the tail's relative precision (no 1 - erf).
    """
    flat_x, flat_out = x.reshape(-1), out.reshape(-1)
    inv_sqrt2 = x.dtype.type(1 / np.sqrt(2.0))
    for start in range(0, flat_x.size, GELU_CHUNK):
        xs, os_ = flat_x[start : start + GELU_CHUNK], flat_out[start : start + GELU_CHUNK]
        z = np.abs(xs)
        z *= inv_sqrt2
        tail = _erfc_abs(z, os_)
        z *= tail
        z *= inv_sqrt2  # |x|/√2 · erfc · 1/√2 = |x|/2 · erfc(|x|/√2)
        np.maximum(xs, 0, out=os_)
        os_ -= z
    return out


def gram_lhee(w_o_lhed: Array) -> NDArray[np.float32]:
    """Each layer's and head's W_O,h · W_O,hᵀ [l, h, e, e], in float64 then float32: computed
    once at load, so a pass's value norms cost a [k, e] @ [e, e] per head, not [k, e] @ [e, d]."""
    w = np.asarray(w_o_lhed, np.float64)
    return (w @ w.swapaxes(-1, -2)).astype(np.float32)


def value_norms_gram(v_gke: Array, gram_hee: NDArray[np.float32]) -> NDArray[np.float32]:
    """‖v_j · W_O,h‖ for every head h and key j, [h, k], from the heads' Gram matrices
    (``gram_lhee``): g key/value heads, query head h reading KV head h // (h / g), each group's
    r query heads side by side as one matmul."""
    h, e = gram_hee.shape[0], gram_hee.shape[-1]
    g, k = v_gke.shape[0], v_gke.shape[1]
    if h % g:
        raise ValueError(f"{g} key/value heads do not divide {h} query heads")
    r = h // g
    # [g, k, e] @ [g, e, r·e] -> [g, k, r·e]: v_j · G_h for the r heads of each group
    grams_gex = gram_hee.reshape(g, r, e, e).transpose(0, 2, 1, 3).reshape(g, e, r * e)
    vg_gkre = np.matmul(v_gke, grams_gex).reshape(g, k, r, e)
    vg_gkre *= v_gke[:, :, None, :]
    squared_gkr = vg_gkre.sum(axis=-1)
    np.maximum(squared_gkr, 0, out=squared_gkr)
    return np.sqrt(squared_gkr.transpose(0, 2, 1).reshape(h, k)).astype(np.float32, copy=False)


def causal_mask(n_q: int, n_k: int | None = None) -> NDArray[np.bool_]:
    """[q, k] boolean mask, True where query i may see key j (j <= i)."""
    n_k = n_q if n_k is None else n_k
    return np.tril(np.ones((n_q, n_k), dtype=bool))


@dataclass(frozen=True)
class AttentionSteps:
    """The four stages of one attention pattern, each [..., q, k]."""

    scores: Array  # raw Q·Kᵀ
    scaled: Array  # scores / √d_k (or unchanged when scaling is off), then / temperature
    masked: Array  # scaled with hidden entries set to -inf
    pattern: Array  # softmax over keys; hidden entries exactly 0
    allowed_qk: NDArray[np.bool_]  # True where a query may attend to a key


def attention_steps(
    scores: Array,
    d_k: int,
    *,
    scale: bool = True,
    temperature: float = 1.0,
    causal: bool = False,
    key_mask_k: NDArray[np.bool_] | None = None,
) -> AttentionSteps:
    """Turn raw scores [..., q, k] into the scaled, masked and softmaxed stages.

    key_mask_k marks real (True) versus padding (False) keys; causal hides later keys.
    """
    allowed = _allowed_qk(scores, d_k, temperature, causal, key_mask_k)
    scaled = _scale_into(scores, _divisor(d_k, scale, temperature), np.empty_like(scores))
    masked = scaled if allowed.all() else _mask_into(allowed, scaled.copy())
    return AttentionSteps(scores, scaled, masked, softmax(masked), allowed)


def pattern_into(
    scores: Array,
    d_k: int,
    out: Array,
    *,
    scale: bool = True,
    temperature: float = 1.0,
    causal: bool = False,
    key_mask_k: NDArray[np.bool_] | None = None,
) -> Array:
    """``attention_steps(...).pattern``, bit for bit, written into ``out`` with no temporary of
    the scores' size: the forward pass keeps only scores and pattern, not the middle stages."""
    allowed = _allowed_qk(scores, d_k, temperature, causal, key_mask_k)
    divisor = _divisor(d_k, scale, temperature)
    masked = not allowed.all()
    with np.errstate(over="ignore"):
        np.divide(scores, scores.dtype.type(divisor), out=out)
    if masked:
        _mask_into(allowed, out)
    scaled_max = out.max(axis=-1, keepdims=True)
    # attention_steps clips ±inf from an overflow to ±big before masking. That can change the
    # pattern only in a row holding +inf or nan (its max shows it) or whose max is so low that
    # -big is within exp's reach of it (a row with every key masked has max -inf); in every
    # other row -inf and -big both give exactly 0. So the clip (and _scale_into's two
    # whole-array passes) runs only when a row max says so.
    big = np.finfo(out.dtype).max
    if np.isfinite(scaled_max).all() and (scaled_max > -big / 2).all():
        return softmax_into(out, out, row_max=scaled_max)
    if masked:  # the plain path, from the scores again (a mask moves each row's max)
        return softmax_into(_mask_into(allowed, _scale_into(scores, divisor, out)), out)
    np.clip(out, -big, big, out=out)
    return softmax_into(out, out)


def _allowed_qk(
    scores: Array,
    d_k: int,
    temperature: float,
    causal: bool,
    key_mask_k: NDArray[np.bool_] | None,
) -> NDArray[np.bool_]:
    """Check the arguments; [q, k] True where a query may attend to a key."""
    if scores.ndim < 2:
        raise ValueError(f"scores must be at least 2-D [..., q, k], got shape {scores.shape}")
    if d_k < 1:
        raise ValueError(f"d_k must be >= 1, got {d_k}")
    if not (np.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature must be a finite number > 0, got {temperature}")
    n_q, n_k = scores.shape[-2:]
    allowed = np.ones((n_q, n_k), dtype=bool)
    if causal:
        allowed &= causal_mask(n_q, n_k)
    if key_mask_k is not None:
        if key_mask_k.shape != (n_k,):
            raise ValueError(f"key_mask_k must have shape ({n_k},), got {key_mask_k.shape}")
        allowed &= key_mask_k[None, :]
    return allowed


def _divisor(d_k: int, scale: bool, temperature: float) -> float:
    return float((np.sqrt(d_k) if scale else 1.0) * temperature)


def _scale_into(scores: Array, divisor: float, out: Array) -> Array:
    with np.errstate(over="ignore"):
        np.divide(scores, scores.dtype.type(divisor), out=out)
    # Finite iff its extremes are (a nan makes both nan): two reductions, no boolean array.
    if not (np.isfinite(out.max()) and np.isfinite(out.min())):
        # A huge score over a tiny temperature can overflow to ±inf; clip it to the largest
        # finite value so that only the mask, never an overflow, makes an entry -inf.
        big = np.finfo(out.dtype).max
        np.clip(out, -big, big, out=out)
    return out


def _mask_into(allowed_qk: NDArray[np.bool_], scaled: Array) -> Array:
    np.copyto(scaled, scaled.dtype.type(-np.inf), where=~allowed_qk)
    return scaled


def top_k(probs_tv: NDArray[np.float32], k: int) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    """The k most probable ids of each row, most probable first, and their probabilities."""
    part = np.argpartition(probs_tv, -k, axis=-1)[:, -k:]
    vals = np.take_along_axis(probs_tv, part, axis=-1)
    order = np.argsort(-vals, axis=-1, kind="stable")
    ids = np.take_along_axis(part, order, axis=-1).astype(np.int64)
    return ids, np.take_along_axis(vals, order, axis=-1)


def top_k_blocked(
    values_tv: NDArray[np.float32], k: int, block: int = 64
) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    """``top_k`` over long rows, ~10x faster: the k largest values lie in the k blocks with the
    largest maxima, so only those blocks are searched (argpartition over 49,152 logits per row
    was a tenth of a 512-token pass)."""
    t, v = values_tv.shape
    if v % block or v // block <= k:
        return top_k(values_tv, k)
    blocks_tnb = values_tv.reshape(t, v // block, block)
    best_tk = np.argpartition(blocks_tnb.max(axis=-1), -k, axis=-1)[:, -k:]
    candidates = np.take_along_axis(blocks_tnb, best_tk[:, :, None], axis=1).reshape(t, -1)
    ids, vals = top_k(candidates, k)
    block_of, within = np.divmod(ids, block)
    return np.take_along_axis(best_tk, block_of, axis=1) * block + within, vals
