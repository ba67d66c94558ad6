"""Where a decoder's heads put their weight across a whole text: the first token's share (the
"attention sink") and each head's reach, the mean distance back its weight travels.

For one head's causal pattern p[q, k] (query q sees keys 0..q):

- sink share: the mean over every query of p[q, 0], the weight on the text's first token. An
  even spread over what each query sees puts 1 / (q + 1) there (``even_sink``).
- distance: Σ_k p[q, k]·(q − k) tokens back, averaged over queries 1..n−1 (query 0 sees only
  itself: it has no distance to spend). It is q − Σ_k p[q, k]·k, one product per row.
- reach: the same distance as a share of the q tokens available, averaged over queries 1..n−1.
  An even spread over keys 0..q travels q / 2 on average: it reads 0.5, the yardstick; 0 is a
  head that only reads each token itself, 1 one that only reads the first token.
- top key: the key with the most weight averaged over all queries (often the first: the sink).

The walk reads one layer's patterns at a time (a decoder trace computes each when indexed), so
it never holds more than one layer's [h, t, t]. Along the text, queries are grouped in bins of
``bin_tokens(n)`` and every measure is also reported per bin.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attention_core.core.family import Trace

F64 = NDArray[np.float64]
BINS = 8  # about this many bins along a text, whatever its length
MIN_BIN = 16  # the shortest bin, in tokens


@dataclass(frozen=True)
class HeadReach:
    """One layer's heads across one text: whole-text means [h] and per-bin means [h, b]."""

    sink_h: F64  # mean over queries of the weight on the first token
    distance_h: F64  # mean over queries 1..n−1 of the weighted distance back, in tokens
    reach_h: F64  # mean over queries 1..n−1 of that distance ÷ q (even spread: 0.5)
    top_key_h: NDArray[np.int64]  # the key with the most weight averaged over queries
    top_share_h: F64  # that key's mean weight
    sink_hb: F64  # sink share per bin of queries
    reach_hb: F64  # reach per bin (NaN in a bin holding only query 0)


@dataclass(frozen=True)
class TextReach:
    """Every layer's and head's sink share and reach across one text, whole and per bin."""

    sink_lh: F64  # [l, h] weight on the first token, mean over queries
    distance_lh: F64  # [l, h] tokens back, mean over queries 1..n−1
    reach_lh: F64  # [l, h] distance ÷ distance available (q), mean over queries 1..n−1
    top_key_lh: NDArray[np.int64]  # [l, h] the key position with the most mean weight
    top_share_lh: F64  # [l, h] its mean weight
    sink_lhb: F64  # [l, h, b] sink share per bin of queries
    reach_lhb: F64  # [l, h, b] reach per bin
    bin_starts: NDArray[np.int64]  # [b] each bin's first query position
    n_tokens: int

    @property
    def bin_size(self) -> int:
        return int(self.bin_starts[1] - self.bin_starts[0]) if len(self.bin_starts) > 1 else 0

    def even_sink(self) -> float:
        """An even spread's sink share on this text: the mean over q of 1 / (q + 1)."""
        return float(np.mean(1.0 / np.arange(1, self.n_tokens + 1)))

    def even_sink_b(self) -> F64:
        """An even spread's sink share in each bin."""
        inverse_q = 1.0 / np.arange(1, self.n_tokens + 1)
        return np.add.reduceat(inverse_q, self.bin_starts) / _bin_counts(self)


def _bin_counts(reach: TextReach) -> F64:
    ends = np.append(reach.bin_starts[1:], reach.n_tokens)
    return (ends - reach.bin_starts).astype(np.float64)


def bin_tokens(n_tokens: int) -> int:
    """Queries per bin: the power of two nearest n / ``BINS``, at least ``MIN_BIN`` (256 at
    2,048 tokens, 64 at 512, 16 at 128 and below)."""
    if n_tokens < 1:
        raise ValueError(f"need at least one token, got {n_tokens}")
    return max(MIN_BIN, int(2 ** round(float(np.log2(max(n_tokens / BINS, 1))))))


def head_reach(pattern_hqk: NDArray[np.floating], bin_size: int) -> HeadReach:
    """Sink share, distance, reach and top key of every head of one causal layer, [h, q, k]
    (a key after its query would count as a negative distance: ``text_reach`` checks the model
    is causal)."""
    p = np.asarray(pattern_hqk, dtype=np.float32)
    if p.ndim != 3 or p.shape[1] != p.shape[2] or p.shape[1] == 0:
        raise ValueError(f"need a pattern [h, q, k] with q == k > 0, got {p.shape}")
    if bin_size < 1:
        raise ValueError(f"bin_size must be at least 1, got {bin_size}")
    n = p.shape[1]
    positions_k = np.arange(n, dtype=np.float64)
    # one head at a time in float64: a [t, t] copy, not [h, t, t]
    distance_hq = np.stack(
        [positions_k * qk.sum(-1) - qk @ positions_k for qk in map(_f64, p)]  # Σ_k p·(q − k)
    )
    share_hq = np.full_like(distance_hq, np.nan)
    share_hq[:, 1:] = distance_hq[:, 1:] / positions_k[1:]
    sink_hq = p[:, :, 0].astype(np.float64)
    column_h = p.mean(1, dtype=np.float64)  # [h,q,k] -> [h,k]: mean weight each key gets
    starts = np.arange(0, n, bin_size)
    return HeadReach(
        sink_h=sink_hq.mean(-1),
        distance_h=distance_hq[:, 1:].mean(-1) if n > 1 else np.zeros(len(p)),
        reach_h=np.nanmean(share_hq, -1) if n > 1 else np.full(len(p), np.nan),
        top_key_h=column_h.argmax(-1),
        top_share_h=column_h.max(-1),
        sink_hb=_bin_means(sink_hq, starts),
        reach_hb=_bin_means(share_hq, starts),
    )


def _f64(pattern_qk: NDArray[np.float32]) -> F64:
    return pattern_qk.astype(np.float64)


def _bin_means(values_hq: F64, starts: NDArray[np.int64]) -> F64:
    """[h, b] means over each bin of queries, NaN (query 0's share) left out; an all-NaN bin
    gives NaN."""
    known = ~np.isnan(values_hq)
    sums = np.add.reduceat(np.where(known, values_hq, 0.0), starts, axis=-1)
    counts = np.add.reduceat(known.astype(np.float64), starts, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def text_reach(trace: Trace, bin_size: int | None = None) -> TextReach:
    """Every layer's and head's sink share and reach over the trace's whole text, reading one
    layer's patterns at a time. Causal models only: reach counts distance back."""
    if not trace.config.causal:
        raise ValueError(f"{trace.config.name} is not causal: reach counts the distance back")
    n = trace.n_tokens
    size = bin_tokens(n) if bin_size is None else bin_size
    layers = [
        head_reach(trace.pattern_lhqk[layer], size) for layer in range(len(trace.pattern_lhqk))
    ]

    def stack(name: str) -> Any:  # [l, ...]: each field's own dtype
        return np.stack([getattr(layer, name) for layer in layers])

    return TextReach(
        sink_lh=stack("sink_h"),
        distance_lh=stack("distance_h"),
        reach_lh=stack("reach_h"),
        top_key_lh=stack("top_key_h"),
        top_share_lh=stack("top_share_h"),
        sink_lhb=stack("sink_hb"),
        reach_lhb=stack("reach_hb"),
        bin_starts=np.arange(0, n, size),
        n_tokens=n,
    )
