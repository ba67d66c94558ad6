"""Token-by-token maps held pooled past a length: a [t, t] map of a long text (a rollout of 2,048
tokens is 16.8 MB a layer) is kept as the means of ``block`` × ``block`` squares, at most
``POOLED_SIDE`` a side, once the text is longer than ``WHOLE_UP_TO`` tokens. The rollout
(``methods.rollout``) is held this way, and a decoder's trace sizes what it will hold with
``held_nbytes``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

WHOLE_UP_TO = 512  # the longest text whose [t, t] maps are held whole (1 MB each here)
POOLED_SIDE = 512  # beyond it, a held map is pooled to at most this many cells a side


def held_block(n_tokens: int) -> int:
    """Tokens per pooled cell of a held map: 1 up to WHOLE_UP_TO, then as few as fit."""
    return 1 if n_tokens <= WHOLE_UP_TO else -(-n_tokens // POOLED_SIDE)


def held_nbytes(n_tokens: int, count: int) -> int:
    """Bytes of ``count`` float32 [t, t] maps held as ``held_block`` says."""
    side = -(-n_tokens // held_block(n_tokens))
    return 4 * count * side * side


def pool_mean(x_qk: NDArray[Any], block: int) -> NDArray[np.float32]:
    """Mean of each ``block`` × ``block`` square of ``x_qk`` [q, k] (the last ones along each
    axis may be smaller)."""
    rows, cols = x_qk.shape
    r_at, c_at = np.arange(0, rows, block), np.arange(0, cols, block)
    summed = np.add.reduceat(np.add.reduceat(x_qk, c_at, axis=1), r_at, axis=0)
    sizes = np.outer(np.diff(np.append(r_at, rows)), np.diff(np.append(c_at, cols)))
    return (summed / sizes).astype(np.float32)
