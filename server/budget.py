"""One memory budget for everything a visitor can start: what things hold, counted as they hold
it, and the reservation every kind of work takes before it runs and gives back after.

The ledger is the trace store (``server.trace_store.TraceStore``): its traces and the passes
computing stay within its trace budget (320 MB by default), and the traces, the passes and
every other reservation (``reserved``: exports, verify runs, generations, sweeps, Whisper's
passes) stay within its ``total``. Room for other work is made by dropping stored traces, least
recently used first; when even an empty store leaves no room, the work is refused with
``Busy`` (a plain message) before anything is loaded or computed.

``nbytes`` counts a trace's bytes: its arrays, nested dataclasses, and what a decoder's trace
holds outside its fields (``Held``: its layer cache, which fills after the trace is stored and
says so through ``watch``).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import fields, is_dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from attention_core.core.buffers import base_buffer

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

MB = 2**20
# The whole budget: 512 MB; the traces keep their own 320 MB within it. With the three models'
# weights shared by the replicas (attention_core/models/shared_weights.py), a replica of two holds
# runtime 150-250 MB + its half of the weights 390 MB + this budget: ≤ 1.2 GB of PSS
# (docs/SERVING.md, "Memory per replica"; a class's 30 short sentences take 165 MB).
# A verify run (580 MB to 1.8 GB) needs more: ATTENTION_MEMORY_BUDGET_MB
# raises it on a bigger server, and without it the check says plainly that it cannot run here.
TOTAL_BYTES = int(os.environ.get("ATTENTION_MEMORY_BUDGET_MB", "512")) * MB
# Verify runs' peaks over the server's own memory (VmHWM less VmRSS before, one process, this
# machine): torch and the reference libraries imported, the reference model loaded, every
# attention of the sentence. MiniLM 584 MB at 11 tokens, 742 MB at 512 (sentence-transformers'
# second copy of the weights); SmolLM2 1140 MB at 9 tokens (its weights dequantized into torch),
# 1756 MB at 540; Whisper 820 MB for a 30 s clip (docs/PERFORMANCE.md). The attentions grow as
# the square of the tokens: (MB at a few tokens, MB more at ``tokens``, tokens).
_VERIFY_MEASURED = {
    "minilm": (590, 160, 512),
    "smollm2": (1150, 620, 540),
    "whisper": (830, 0, 1),
}


def verify_peak(model: str, n_tokens: int) -> int:
    """Bytes a verify run of ``model`` on ``n_tokens`` tokens peaks at, over the server's."""
    base, grown, at = _VERIFY_MEASURED[model]
    return int((base + grown * min(1.0, (n_tokens / at) ** 2)) * MB)


# Whisper's transcription of a 30 s clip, as kept (a Heard: cross-attention 4 × 6 × 448 × 1500
# float32 at most, 64 MB; the encoder's stream 11.5 MB; the rest small), and its temporaries.
HEARD_PEAK = 100 * MB
BUSY = "The server is busy with other visitors' work just now. Please try again in a minute."


class Busy(Exception):
    """No room in the memory budget for this work, even with every stored trace dropped."""

    def __init__(self, message: str = BUSY) -> None:
        super().__init__(message)


def too_big(size: int, total: int) -> str:
    """The message for work that could never fit this server's budget."""
    return (
        f"This needs about {size / 2**30:.1f} GB of memory, more than this server sets aside "
        f"for visitors' work ({total / 2**30:.1f} GB), so it cannot run here."
    )


class Ledger(Protocol):
    """What ``reserved`` needs of the trace store."""

    total: int

    def reserve(self, size: int) -> bool: ...

    def give_back(self, size: int) -> None: ...


@contextmanager
def reserved(ledger: Ledger, size: int) -> Iterator[None]:
    """Hold ``size`` bytes of the budget while the block runs, given back however it ends;
    ``Busy`` at once (nothing run) when there is no room."""
    if size > ledger.total:
        raise Busy(too_big(size, ledger.total))
    if not ledger.reserve(size):
        raise Busy()
    try:
        yield
    finally:
        ledger.give_back(size)


@runtime_checkable
class Held(Protocol):
    """Arrays a trace holds outside its fields, which may change after it is stored."""

    def arrays(self) -> list[NDArray[Any]]: ...

    def watch(self, callback: Callable[[], None]) -> None: ...


def _count(array: NDArray[Any], seen: set[int]) -> int:
    """An array's bytes, once: an engine buffer's (``attention_core.core.buffers``) whole."""
    buffer = base_buffer(array)
    counted = array if buffer is None else buffer
    if id(counted) in seen:
        return 0
    seen.add(id(counted))
    return int(counted.nbytes)


def nbytes(obj: DataclassInstance, seen: set[int] | None = None) -> int:
    """Bytes held by the arrays of a dataclass, nested ones and ``Held`` parts included; arrays
    that view one buffer of the engine's count that whole buffer, once."""
    seen = set() if seen is None else seen
    total = 0
    for f in fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, np.ndarray):
            total += _count(value, seen)
        elif is_dataclass(value) and not isinstance(value, type):
            total += nbytes(value, seen)
        elif isinstance(value, Held):
            total += sum(_count(a, seen) for a in value.arrays())
    return total


def held_parts(obj: DataclassInstance) -> list[Held]:
    """The ``Held`` parts of a dataclass's fields (a decoder trace's layer cache)."""
    return [v for v in (getattr(obj, f.name) for f in fields(obj)) if isinstance(v, Held)]


class MemoryLedger:
    """The trace store's memory accounting (``server.trace_store.TraceStore`` sets these
    attributes): stored traces by key with their bytes (``_lru``, least recently used first),
    their sum ``nbytes``, the passes computing (``reserved``), other work's reservations
    (``other``); traces and passes within ``budget``, everything within ``total``."""

    budget: int
    total: int
    nbytes: int
    reserved: int
    other: int
    _lru: OrderedDict[Hashable, tuple[Any, int]]
    _lock: threading.Lock
    lasting: set[Hashable]  # keys dropped only after every other trace (``_evict``)

    def _evict(self, fits: Callable[[], bool], keep: Hashable | None = None) -> None:
        """Drop traces until ``fits()`` (called with self._lock held): the big ones first (a
        quarter of the budget or more), least recently used first, then the other ordinary ones,
        and only then the lasting ones (``lasting``: a heard clip, which only its page can
        compute again and whose layers the browser fetches after the page has drawn). So one
        visitor's 512-token traces (235 MB each) make room for each other, not by pushing out a
        whole class's short sentences, which they would then all compute again."""
        for tier in ("big", "ordinary", "lasting"):
            for key in list(self._lru):
                if fits():
                    return
                size = self._lru[key][1]
                if key == keep or (tier != "lasting" and key in self.lasting):
                    continue
                if tier == "big" and size < self.budget // 4:
                    continue
                del self._lru[key]
                self.lasting.discard(key)
                self.nbytes -= size

    def _fits(self, more: int = 0) -> bool:  # called with self._lock held
        traces = self.nbytes + self.reserved
        return traces <= self.budget and traces + self.other + more <= self.total

    def _make_room(self, expected: int) -> None:
        """Reserve a pass's bytes, dropping traces for them (a pass is never refused)."""
        with self._lock:
            self.reserved += expected
            self._evict(self._fits)

    def _store(self, key: Hashable, trace: DataclassInstance, lasting: bool = False) -> None:
        if lasting:
            with self._lock:
                self.lasting.add(key)
        for part in held_parts(trace):  # a decoder's layer cache fills later: count it again
            part.watch(lambda: self._recount(key))
        with self._lock:
            self._count(key, trace, 0)

    def _recount(self, key: Hashable) -> None:
        """Count a stored trace again (what it holds changed), dropping others to fit."""
        with self._lock:
            if key in self._lru:
                self._count(key, *self._lru[key])

    def _count(self, key: Hashable, trace: Any, old: int) -> None:  # with self._lock held
        size = nbytes(trace)
        self._lru[key] = (trace, size)
        self.nbytes += size - old
        self._evict(self._fits, keep=key)  # the newest (or the one that grew) stays

    def reserve(self, size: int) -> bool:
        """Hold ``size`` bytes for work other than a pass (``server.budget.reserved``), dropping
        stored traces while it does not fit; False when it still does not."""
        with self._lock:
            self._evict(lambda: self._fits(size))
            if not self._fits(size):
                return False
            self.other += size
            return True

    def give_back(self, size: int) -> None:
        with self._lock:
            self.other -= size
