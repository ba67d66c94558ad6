"""What a longer context costs: the engine's forward time and its attention matrices' bytes.

Every layer and head holds an n×n score matrix and an n×n pattern, so their memory grows with
the square of the token count n; the time of the whole pass grows more slowly at first (the
per-token matrix products are linear in n) and then turns quadratic as the n×n work dominates.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attention_core.core.family import LoadedModel
from attention_core.core.tokens import Tokens
from attention_core.models import run_model, tokenize

COST_SIZES: tuple[int, ...] = (16, 32, 64, 128, 256, 512)  # token counts measured
_FILLER = "attention"  # used when the text has no word pieces of its own


@dataclass(frozen=True)
class CostPoint:
    """One measured forward pass."""

    n_tokens: int  # tokens in the pass, [CLS] and [SEP] included
    seconds: float  # wall time of one NumPy forward pass on this machine
    attention_bytes: int  # bytes of every layer's and head's scores and pattern in the trace


def attention_bytes(n_tokens: int, n_layers: int, n_heads: int, itemsize: int = 4) -> int:
    """Bytes of the scores and the pattern, [l, h, n, n] each: 2·l·h·n²·itemsize."""
    return 2 * n_layers * n_heads * n_tokens * n_tokens * itemsize


def tokens_of_length(model: LoadedModel, text: str, n_tokens: int) -> Tokens:
    """``text`` repeated until it has at least ``n_tokens`` tokens, cut to exactly that many."""
    if not 3 <= n_tokens <= model.config.n_positions:
        raise ValueError(f"n_tokens must be in [3, {model.config.n_positions}], got {n_tokens}")
    pieces = len(tokenize(model, text)) - 2 if text.strip() else 0
    if pieces < 1:
        text, pieces = _FILLER, len(tokenize(model, _FILLER)) - 2
    repeats = -(-(n_tokens - 2) // pieces)
    return tokenize(model, " ".join([text] * repeats), n_tokens)


def measure_cost(
    model: LoadedModel, text: str, sizes: tuple[int, ...] = COST_SIZES
) -> tuple[CostPoint, ...]:
    """Time one forward pass per size over ``text`` repeated to that many tokens, and count the
    bytes its scores and pattern take. One timed pass per size, after one untimed pass at the
    smallest size (the first pass pays for warming caches), so the cost stays bounded."""
    if not sizes:
        raise ValueError("need at least one size")
    run_model(model, tokens_of_length(model, text, min(sizes)))
    points = []
    for n in sizes:
        tokens = tokens_of_length(model, text, n)
        start = time.perf_counter()
        trace = run_model(model, tokens)
        seconds = time.perf_counter() - start
        nbytes = trace.scores_lhqk.nbytes + trace.pattern_lhqk.nbytes
        points.append(CostPoint(len(tokens), seconds, int(nbytes)))
    return tuple(points)


def square_law(n_tokens: NDArray[Any], values: NDArray[Any]) -> NDArray[np.float64]:
    """The curve c·n² that passes through the last (largest) point: what pure n² growth would
    give at every n, for comparison with the measured ``values``."""
    n = np.asarray(n_tokens, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    if n.shape != v.shape or n.size == 0 or n[-1] <= 0:
        raise ValueError(f"need matching non-empty sizes and values, got {n.shape}, {v.shape}")
    return v[-1] * (n / n[-1]) ** 2
