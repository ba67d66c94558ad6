"""What a longer context costs: the engine's forward time, its attention matrices' bytes, and
the bytes its trace holds; and a fit of the measured cost as a·n + b·n² + c.

Every layer and head computes an n×n score matrix and an n×n pattern, so their memory grows with
the square of the token count n; the time of the whole pass grows more slowly at first (the
per-token matrix products are linear in n) and then turns quadratic as the n×n work dominates.
MiniLM's trace holds every layer's matrices; SmolLM2's holds the residual stream and recomputes
a layer's when asked, so what it holds grows like n.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attention_core.core.config import ModelConfig
from attention_core.core.family import LoadedModel, Trace
from attention_core.core.tokens import Tokens
from attention_core.models import run_model, tokenize, trace_nbytes

COST_SIZES: tuple[int, ...] = (16, 32, 64, 128, 256, 512)  # token counts measured (the tour)
LONG_SIZES: tuple[int, ...] = (128, 256, 512, 1024, 2048)  # a long text's lengths (Long text)
_FILLER = "attention"  # used when the text has no word pieces of its own


@dataclass(frozen=True)
class CostPoint:
    """One measured forward pass."""

    n_tokens: int  # tokens in the pass, [CLS] and [SEP] included
    seconds: float  # wall time of one NumPy forward pass on this machine
    attention_bytes: int  # bytes of every layer's and head's scores and pattern, held or not
    held_bytes: int  # bytes the trace holds right after the pass


def attention_bytes(n_tokens: int, n_layers: int, n_heads: int, itemsize: int = 4) -> int:
    """Bytes of the scores and the pattern, [l, h, n, n] each: 2·l·h·n²·itemsize."""
    return 2 * pattern_bytes(n_tokens, n_layers, n_heads, itemsize)


def pattern_bytes(n_tokens: int, n_layers: int, n_heads: int, itemsize: int = 4) -> int:
    """Bytes of every layer's and head's pattern, [l, h, n, n]: l·h·n²·itemsize."""
    return n_layers * n_heads * n_tokens * n_tokens * itemsize


def long_sizes(config: ModelConfig) -> tuple[int, ...]:
    """The ``LONG_SIZES`` the engine runs for this model (up to its ``max_tokens``)."""
    return tuple(n for n in LONG_SIZES if n <= config.max_tokens)


def tokens_of_length(model: LoadedModel, text: str, n_tokens: int) -> Tokens:
    """``text`` repeated until it has at least ``n_tokens`` tokens, cut to exactly that many."""
    if not 3 <= n_tokens <= model.config.max_tokens:
        raise ValueError(f"n_tokens must be in [3, {model.config.max_tokens}], got {n_tokens}")
    pieces = _pieces(model, text) if text.strip() else 0
    if pieces < 1:
        text, pieces = _FILLER, _pieces(model, _FILLER)
    repeats = -(-(n_tokens - 2) // pieces)
    return tokenize(model, " ".join([text] * repeats), n_tokens)


def _pieces(model: LoadedModel, text: str) -> int:
    """The text's own tokens, the model's markers ([CLS], [SEP]) left out."""
    tokens = tokenize(model, text)
    return int(len(tokens) - np.count_nonzero(tokens.special_t))


def held_bytes(trace: Trace) -> int:
    """Bytes the trace holds: a decoder trace counts its own (``nbytes``: the residual stream
    and whatever layers its cache keeps); an encoder trace holds what ``trace_nbytes`` counts."""
    own = getattr(trace, "nbytes", None)
    return int(own) if isinstance(own, int) else trace_nbytes(trace.config, trace.n_tokens)


def time_forward(model: LoadedModel, text: str, n_tokens: int) -> CostPoint:
    """One timed forward pass over ``text`` repeated to ``n_tokens`` tokens, with its bytes."""
    tokens = tokens_of_length(model, text, n_tokens)
    start = time.perf_counter()
    trace = run_model(model, tokens)
    seconds = time.perf_counter() - start
    cfg = model.config
    n = len(tokens)
    return CostPoint(n, seconds, attention_bytes(n, cfg.n_layers, cfg.n_heads), held_bytes(trace))


def measure_cost(
    model: LoadedModel, text: str, sizes: tuple[int, ...] = COST_SIZES
) -> tuple[CostPoint, ...]:
    """Time one forward pass per size over ``text`` repeated to that many tokens, and count the
    bytes its scores and pattern take. One timed pass per size, after one untimed pass at the
    smallest size (the first pass pays for warming caches), so the cost stays bounded."""
    if not sizes:
        raise ValueError("need at least one size")
    run_model(model, tokens_of_length(model, text, min(sizes)))
    return tuple(time_forward(model, text, n) for n in sizes)


def square_law(n_tokens: NDArray[Any], values: NDArray[Any]) -> NDArray[np.float64]:
    """The curve c·n² that passes through the last (largest) point: what pure n² growth would
    give at every n, for comparison with the measured ``values``."""
    n = np.asarray(n_tokens, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    if n.shape != v.shape or n.size == 0 or n[-1] <= 0:
        raise ValueError(f"need matching non-empty sizes and values, got {n.shape}, {v.shape}")
    return np.asarray(v[-1] * (n / n[-1]) ** 2, dtype=np.float64)


@dataclass(frozen=True)
class CostFit:
    """A measured cost read as value(n) = a·n + b·n² + c, with a, b, c ≥ 0."""

    a: float  # the part that grows like n, per token
    b: float  # the part that grows like n², per pair of tokens
    c: float  # the part that does not grow with n

    def __call__(self, n_tokens: NDArray[Any]) -> NDArray[np.float64]:
        n = np.asarray(n_tokens, dtype=np.float64)
        return self.a * n + self.b * n * n + self.c

    def square_share(self, n_tokens: NDArray[Any]) -> NDArray[np.float64]:
        """The n² part's share of the fitted value at each n (0 where the fit is 0)."""
        n = np.asarray(n_tokens, dtype=np.float64)
        total = self(n)
        return np.divide(self.b * n * n, total, out=np.zeros_like(total), where=total > 0)


_TERMS = ("a", "b", "c")


def fit_cost(n_tokens: NDArray[Any], values: NDArray[Any]) -> CostFit:
    """Least squares of ``values`` on n, n² and 1 with no negative part (a cost has none): every
    subset of the three terms is fitted and the best fit whose coefficients are all ≥ 0 kept,
    which is the exact non-negative least squares for three terms."""
    n = np.asarray(n_tokens, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    if n.ndim != 1 or n.shape != v.shape or n.size < 2 or (n <= 0).any():
        raise ValueError(f"need ≥ 2 positive sizes and as many values, got {n.shape}, {v.shape}")
    columns = np.stack([n, n * n, np.ones_like(n)], axis=1)
    scale = columns.max(axis=0)  # n² at 2,048 is 4e6: scaled, the columns are alike in size
    best, best_error = np.zeros(3), float(np.sum(v * v))
    for mask in range(1, 8):
        used = [i for i in range(3) if mask >> i & 1]
        coef, *_ = np.linalg.lstsq(columns[:, used] / scale[used], v, rcond=None)
        if (coef < 0).any():
            continue
        full = np.zeros(3)
        full[used] = coef / scale[used]
        error = float(np.sum((columns @ full - v) ** 2))
        if error < best_error:
            best, best_error = full, error
    return CostFit(**{name: float(x) for name, x in zip(_TERMS, best, strict=True)})


def seconds_left(timed: tuple[CostPoint, ...], sizes: tuple[int, ...]) -> float | None:
    """The time the ``sizes`` not yet timed should take, from the fit of the ``timed`` points
    (None before two are timed: one point fixes no growth)."""
    if len(timed) < 2:
        return None
    done = {p.n_tokens for p in timed}
    fit = fit_cost(np.array([p.n_tokens for p in timed]), np.array([p.seconds for p in timed]))
    return float(fit(np.array([n for n in sizes if n not in done], dtype=np.float64)).sum())
