"""Memory for a trace's arrays, reused once the trace is gone.

A trace keeps every intermediate of its pass (24.5 MB at 128 tokens for MiniLM). Memory fresh
from the system costs one page fault per 4 kB page at its first touch: about 3,600 faults and
8 ms of a 50 ms pass at 128 tokens, against none once the same memory is reused. So a pass takes
one buffer for all its arrays (``take``), and when every array of a dropped trace is gone, the
next pass of the same size class gets that buffer back instead of fresh pages. In the server the
trace store drops traces just before a pass, to make room for it, so a full store recycles its
memory; ``release_free`` (called by the server's memory trims) hands the rest back.

Only buffers of 1 to 64 MB are pooled: smaller ones cost few faults, and a bigger one (a
512-token trace is 235 MB) would pin a lot of memory for a pass that takes 200 ms anyway.
"""

from __future__ import annotations

import math
import sys
import threading
import weakref
from typing import Any

import numpy as np
from numpy.typing import NDArray

MIN_POOLED = 1 << 20
MAX_POOLED = 64 << 20
STEPS_PER_DOUBLING = 16  # size classes 2^(k/16) bytes: a buffer is at most 4.4 % larger
PAGE = 4096


def size_class(nbytes: int) -> int:
    """The bytes of the buffer that holds ``nbytes`` (pooled sizes are rounded up to a class,
    so traces of slightly different lengths share buffers; others are left as they are)."""
    if not MIN_POOLED <= nbytes <= MAX_POOLED:
        return nbytes
    step = math.floor(math.log2(nbytes) * STEPS_PER_DOUBLING) - 1
    while _class_bytes(step) < nbytes:  # the smallest class that holds it (a class holds itself)
        step += 1
    return _class_bytes(step)


def _class_bytes(step: int) -> int:
    return math.ceil(2 ** (step / STEPS_PER_DOUBLING) / PAGE) * PAGE


class BufferPool:
    """Buffers handed out by ``take`` and kept, so that once nothing else refers to one (every
    array viewing it is gone) a later ``take`` of its size class reuses it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: list[NDArray[np.uint8]] = []

    def _is_free(self, i: int) -> bool:
        # held[i] referred to by this list and by getrefcount's own argument only: no array
        # views it any more (a view of a view refers to the buffer itself, NumPy's base)
        return sys.getrefcount(self._held[i]) == 2

    def take(self, nbytes: int) -> NDArray[np.uint8]:
        """A buffer of at least ``nbytes``: a free one of the same size class if there is one,
        else a new one. Every other free buffer is let go first, so that a pass (a big one
        that is not pooled included) never runs beside buffers that no trace uses."""
        size = size_class(nbytes)
        with self._lock:
            free = [self._held.pop(i) for i in reversed(range(len(self._held))) if self._is_free(i)]
            found = next((b for b in free if b.nbytes == size), None)
            del free  # the others go back to the system here
            buffer = np.empty(size, np.uint8) if found is None else found
            if MIN_POOLED <= nbytes <= MAX_POOLED:
                self._held.append(buffer)
            _HANDED_OUT[id(buffer)] = buffer
            return buffer

    def release_free(self) -> int:
        """Let go of every free buffer (for the system to take back); the bytes let go."""
        with self._lock:
            freed = 0
            for i in reversed(range(len(self._held))):
                if self._is_free(i):
                    freed += self._held.pop(i).nbytes
            return freed

    def held_bytes(self) -> int:
        """Bytes of every buffer kept, in use or free."""
        with self._lock:
            return sum(b.nbytes for b in self._held)


POOL = BufferPool()
# Every buffer ``take`` handed out and still alive, by id: what ``base_buffer`` recognises.
_HANDED_OUT: weakref.WeakValueDictionary[int, NDArray[np.uint8]] = weakref.WeakValueDictionary()
ALIGN = 64  # each array of a buffer starts on a cache line


def _layout(shapes: dict[str, tuple[int, ...]]) -> tuple[dict[str, int], dict[str, int], int]:
    """Each array's bytes and start in one buffer (aligned), and the bytes they span."""
    sizes = {key: 4 * math.prod(shape) for key, shape in shapes.items()}
    starts, total = {}, 0
    for key, size in sizes.items():
        starts[key] = total
        total += -(-size // ALIGN) * ALIGN
    return sizes, starts, total


def buffer_nbytes(shapes: dict[str, tuple[int, ...]]) -> int:
    """Bytes of the buffer ``float32_views(shapes)`` takes (its size class when pooled)."""
    return size_class(_layout(shapes)[2])


def float32_views(shapes: dict[str, tuple[int, ...]]) -> dict[str, NDArray[np.float32]]:
    """Empty float32 arrays of these shapes, C-contiguous, as views of one buffer from ``POOL``
    (so the buffer comes back to the pool once every one of them is gone)."""
    sizes, starts, total = _layout(shapes)
    buffer = POOL.take(total)
    return {
        key: buffer[starts[key] : starts[key] + sizes[key]].view(np.float32).reshape(shape)
        for key, shape in shapes.items()
    }


def base_buffer(array: NDArray[Any]) -> NDArray[np.uint8] | None:
    """The buffer ``array`` views, if it views one that ``float32_views`` handed out (so that
    memory counts can count the buffer once, with its padding and size class)."""
    base = array.base
    return base if base is not None and _HANDED_OUT.get(id(base)) is base else None


def release_free() -> int:
    """``POOL.release_free()``: the trace buffers no trace uses any more, let go."""
    return POOL.release_free()
