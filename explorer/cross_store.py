"""The cross-attention patterns mounted in this process, held so the browser can fetch one head
at a time (``CROSS_PATH``, served by ``server/cross_blocks.py``) instead of receiving all of them
inline: a 30 s clip's 4 layers × 6 heads over ~100 tokens is 14 MB of float32.

Bounded by bytes, least recently used first out: a clip evicted (or a server restarted) answers
None, and the browser says so in the view; the page's next run mounts the clip again.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import numpy as np
from numpy.typing import NDArray

CROSS_PATH = "/api/attention/cross"  # where the browser fetches one head's cross-attention
CROSS_BUDGET = 64 * 2**20  # bytes held for every session of this process together


def pattern_id(clip: str, pattern_lhqf: NDArray[np.float32]) -> str:
    """The store's key of a mounted pattern: its clip name and its own bytes (two clips with
    the same name and different numbers never share an entry)."""
    digest = hashlib.blake2b(clip.encode(), digest_size=12)
    digest.update(repr(pattern_lhqf.shape).encode())
    digest.update(np.ascontiguousarray(pattern_lhqf, dtype="<f4").data)
    return digest.hexdigest()


class CrossStore:
    """Mounted patterns [layer, head, token, frame] (float32) by ``pattern_id``, at most
    ``budget`` bytes in all; safe to share between the script threads and the route."""

    def __init__(self, budget: int = CROSS_BUDGET) -> None:
        self.budget = budget
        self._held: OrderedDict[str, NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()
        self._nbytes = 0

    def put(self, key: str, pattern_lhqf: NDArray[np.float32]) -> bool:
        """Hold ``pattern_lhqf`` under ``key`` (the most recently used), dropping the least
        recently used past the budget; False (nothing held) when it alone exceeds the budget.
        The store keeps its own copy, so the bytes it counts are the bytes it holds."""
        if pattern_lhqf.ndim != 4:
            raise ValueError(
                f"pattern must be [layer, head, token, frame], got {pattern_lhqf.shape}"
            )
        if pattern_lhqf.size * 4 > self.budget:
            return False
        with self._lock:
            if key in self._held:
                self._held.move_to_end(key)
                return True
        pattern = np.array(pattern_lhqf, dtype="<f4", order="C")  # a copy (outside the lock)
        with self._lock:
            if key in self._held:  # another session put it meanwhile
                self._held.move_to_end(key)
                return True
            self._held[key] = pattern
            self._nbytes += pattern.nbytes
            while self._nbytes > self.budget:
                self._nbytes -= self._held.popitem(last=False)[1].nbytes
        return True

    def head(self, key: str, layer: int, head: int) -> bytes | None:
        """One head's rows [token, frame] as little-endian float32 bytes; None when the key is
        not held (evicted, or another process mounted it). IndexError for a head out of range."""
        with self._lock:
            pattern = self._held.get(key)
            if pattern is None:
                return None
            self._held.move_to_end(key)
        n_layers, n_heads = pattern.shape[:2]
        if not (0 <= layer < n_layers and 0 <= head < n_heads):
            raise IndexError(f"layer {layer}, head {head} is not one of {n_layers} × {n_heads}")
        return pattern[layer, head].tobytes()

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._held

    def nbytes(self) -> int:
        """The bytes held now."""
        with self._lock:
            return self._nbytes

    def keys(self) -> list[str]:
        """The keys held, least recently used first."""
        with self._lock:
            return list(self._held)


CROSS = CrossStore()  # this process's store: mount_cross fills it, the route reads it
