"""How well each cross-attention head follows time: per head, a score for moving forward with
the words (monotone) and one for looking at a few frames rather than everywhere (concentrated).

A head that aligns text with speech gives each written token most of its weight at the moment
the token was said, so the frame each token attends to most moves forward as the tokens do.
``monotone`` is Spearman's rank correlation between token order and that frame (1: always
forward, 0: no order, -1: backward). ``concentrated`` is 1 minus the row's entropy divided by
the entropy of an even spread, averaged over the tokens (1: one frame, 0: all frames alike).
Shape suffixes: l layer, h head, q token (query), k encoder frame (key).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_core.models.whisper.generate import writing_rows as writing_rows  # the rows scored

F64 = NDArray[np.float64]


@dataclass(frozen=True)
class Alignment:
    """Every head's scores over the tokens ``rows`` and the frames ``span`` (half-open)."""

    monotone_lh: F64  # [layers, heads] Spearman's rho (nan with fewer than two tokens)
    concentrated_lh: F64  # [layers, heads] mean of 1 - entropy / log(frames)
    peak_lhq: NDArray[np.int64]  # [layers, heads, tokens] the frame each token attends to most
    rows: tuple[int, int]  # the tokens scored (half-open), e.g. the text after the prompt
    span: tuple[int, int]  # the frames scored (half-open), e.g. the speech


def ranks(values_n: ArrayLike) -> F64:
    """Ranks 0..n-1 of ``values_n``, ties sharing their mean rank (as Spearman's rho wants)."""
    values = np.asarray(values_n, dtype=np.float64).reshape(-1)
    order = np.argsort(values, kind="stable")
    out = np.empty(values.size, dtype=np.float64)
    out[order] = np.arange(values.size, dtype=np.float64)
    for value in np.unique(values):
        tied = values == value
        out[tied] = out[tied].mean()
    return out


def spearman(a_n: ArrayLike, b_n: ArrayLike) -> float:
    """Spearman's rank correlation; nan below two values, 0.0 when either side is constant."""
    a, b = ranks(a_n), ranks(b_n)
    if a.size < 2:
        return float("nan")
    a, b = a - a.mean(), b - b.mean()
    scale = float(np.sqrt(np.sum(a * a) * np.sum(b * b)))
    return float(np.sum(a * b) / scale) if scale > 0 else 0.0


def concentration(rows_qk: ArrayLike) -> float:
    """Mean over rows of 1 - entropy / log(k): 1 for all weight on one key, 0 for an even one.
    Each row is renormalised to sum to 1 first (a row cut to a span of frames)."""
    rows = np.asarray(rows_qk, dtype=np.float64)
    if rows.shape[0] == 0 or rows.shape[1] < 2:
        return float("nan")
    p = rows / np.maximum(rows.sum(axis=1, keepdims=True), 1e-300)
    logs = np.log(np.where(p > 0, p, 1.0))
    entropy = -np.sum(p * logs, axis=1)
    return float(np.mean(1.0 - entropy / np.log(rows.shape[1])))


def peak_frames(rows_qk: ArrayLike, span: tuple[int, int]) -> NDArray[np.int64]:
    """For each row, the frame in ``span`` with the most weight (an index into the full row)."""
    rows = np.asarray(rows_qk)[:, span[0] : span[1]]
    return np.argmax(rows, axis=1).astype(np.int64) + span[0]


def head_alignment(
    cross_lhqk: ArrayLike, rows: tuple[int, int], span: tuple[int, int]
) -> Alignment:
    """Score every head of ``cross_lhqk`` [layers, heads, tokens, frames] on tokens ``rows`` and
    frames ``span`` (both half-open, non-empty spans of frames)."""
    cross = np.asarray(cross_lhqk)
    if not 0 <= span[0] < span[1] <= cross.shape[-1]:
        raise ValueError(f"span {span} is not a non-empty range of the {cross.shape[-1]} frames")
    n_layers, n_heads = cross.shape[:2]
    monotone = np.zeros((n_layers, n_heads))
    concentrated = np.zeros((n_layers, n_heads))
    peaks = np.zeros((n_layers, n_heads, max(rows[1] - rows[0], 0)), dtype=np.int64)
    order = np.arange(peaks.shape[2])
    for layer in range(n_layers):
        for head in range(n_heads):
            part = cross[layer, head, rows[0] : rows[1]]
            peaks[layer, head] = peak_frames(part, span)
            monotone[layer, head] = spearman(order, peaks[layer, head])
            concentrated[layer, head] = concentration(part[:, span[0] : span[1]])
    return Alignment(monotone, concentrated, peaks, rows, span)
