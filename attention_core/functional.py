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
    row_max = np.max(x, axis=axis, keepdims=True)
    if not np.isfinite(row_max).all():
        # +inf would make inf - inf = nan: clamp it to the largest finite value; all -inf rows
        # subtract 0 instead, so they stay -inf, exp to 0 and divide to 0 below.
        x = np.minimum(x, np.finfo(x.dtype).max)
        row_max = np.max(x, axis=axis, keepdims=True)
        row_max = np.where(np.isfinite(row_max), row_max, 0)
    with np.errstate(over="ignore"):  # x - max below float32's range is -inf: exp gives 0
        e = np.subtract(x, row_max)
    np.exp(e, out=e)
    total = np.sum(e, axis=axis, keepdims=True)
    if (total > 0).all():
        return np.divide(e, total, out=e)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def layer_norm(x: Array, gamma: Array, beta: Array, eps: float = 1e-12) -> Array:
    """LayerNorm over the last axis, as BERT computes it (biased variance)."""
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return ((x - mean) / np.sqrt(var + eps)) * gamma + beta


def _erfc(x: Array) -> Array:
    # Numerical Recipes' Chebyshev fit of erfc: relative error < 1.2e-7 everywhere, at float32
    # resolution, so the exact-erf GELU needs no SciPy import on the app's start-up path.
    z = np.abs(x)
    t = 1 / (1 + x.dtype.type(0.5) * z)
    coeffs = (
        0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807,
        -0.18628806, 0.09678418, 0.37409196, 1.00002368, -1.26551223,
    )  # fmt: skip
    poly = np.full_like(t, coeffs[0])
    for c in coeffs[1:]:
        poly *= t
        poly += x.dtype.type(c)
    poly -= z * z
    ans = t * np.exp(poly, out=poly)
    return np.where(x >= 0, ans, 2 - ans)


def gelu(x: Array) -> Array:
    """GELU with the exact erf form (BERT's "gelu"), in the input's precision."""
    return x * (1 - x.dtype.type(0.5) * _erfc(x / x.dtype.type(np.sqrt(2.0))))


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
    divisor = (np.sqrt(d_k) if scale else 1.0) * temperature
    with np.errstate(over="ignore"):
        scaled = scores / scores.dtype.type(divisor)
    if not np.isfinite(scaled).all():
        # A huge score over a tiny temperature can overflow to ±inf; clip it to the largest
        # finite value so that only the mask, never an overflow, makes an entry -inf.
        big = np.finfo(scaled.dtype).max
        scaled = np.clip(scaled, -big, big)
    masked = scaled if allowed.all() else np.where(allowed, scaled, scores.dtype.type(-np.inf))
    return AttentionSteps(scores, scaled, masked, softmax(masked), allowed)
