"""The trace store: forward passes shared by every session, bounded in bytes, at most one pass
per core at a time, and a waiting pass dropped once its session asked for a newer sentence.

Plain Python (no Streamlit): ``ui.cache`` makes the one store of a server process and asks it
for traces; the tests drive it directly.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import fields, is_dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np

from server import profile
from server.budget import MemoryLedger
from server.budget import nbytes as nbytes
from server.lanes import BackLane
from server.memory import release_free_memory
from server.stuck import SlotWatch, runnable_threads

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")


def _timed(compute: Callable[[], T], key: Hashable, size: int, back: bool) -> T:
    """``compute()`` as a profiled step (``server.profile``): named by the key's first part (its
    model, never the text) and the bytes it will hold."""
    name = key[0] if isinstance(key, tuple) and key and isinstance(key[0], str) else "?"
    with profile.step("pass", name, bytes=size, back_lane=back):
        return compute()


def freeze(obj: T) -> T:
    """Make every array of a dataclass read-only, also inside nested ones (a Trace's Tokens)."""
    for f in fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
        elif is_dataclass(value) and not isinstance(value, type):
            freeze(value)
    return obj


class Superseded(Exception):
    """A waiting forward pass that its session no longer wants (it asked for a newer one)."""


class TraceStore(MemoryLedger):
    """Traces shared by every session, least recently used first out once their arrays pass
    ``budget`` bytes (the newest always stays; big traces go before small ones, ``_evict``).
    Not st.cache_resource: its max_entries counts traces, and one 512-token trace holds ~230 MB
    where a 12-token one holds ~1 MB. Not st.cache_data either: that would pickle and copy the
    arrays on every rerun; read-only arrays protect them without the copy. A sentence several
    sessions ask for at once is computed once.

    Fair under one heavy visitor: at most ``slots`` forward passes run at once (default the
    number of cores), the others wait for a slot, and a freed slot goes to the waiting session
    that used the least forward-pass time lately. A session's newer sentence supersedes its
    older one: ``get(..., session=s)`` records the key as s's latest; a request still waiting for
    a slot whose session has since asked for another key, or whose ``wanted()`` turns false (the
    Streamlit run was told to rerun), raises ``Superseded`` instead of computing. A request
    already computing finishes (NumPy cannot be interrupted) and its trace is stored.

    Room before the pass: a request that says how many bytes its trace will hold (``expected()``,
    asked once the pass may start: ``attention_core.trace_nbytes``) has the least recently used
    traces dropped first, so that the stored traces and the passes computing stay within
    ``budget`` together (a 512-token pass allocates 235 MB while the store is full: without this
    the server's peak was the budget plus one or two passes)."""

    POLL_S = 0.05  # how often a waiting request re-asks ``wanted()``
    USAGE_HALF_LIFE_S = 10.0  # how fast a session's forward-pass time is forgotten
    USAGE_CAP_S = 2.0  # a session over this much (decayed) pass time waits before its next
    LOCK_WAIT_S = 0.25  # ``stuck`` waits this long for the lock (in the event loop: briefly)

    def __init__(
        self,
        budget: int,
        slots: int | None = None,
        usage_cap_s: float = USAGE_CAP_S,
        lane: BackLane | None = None,
    ) -> None:
        self.budget = budget
        self.lane = lane  # where heavy passes run (``heavy``); None: in the caller's thread
        self.usage_cap_s = usage_cap_s
        self.nbytes = 0
        self.reserved = 0  # bytes of the passes computing now (their ``expected``)
        # The one memory ledger (server.budget): traces, passes and every other reservation
        # (``other``: exports, verify runs, generations, sweeps) within ``total``.
        self.total = budget
        self.other = 0
        self.slots = max(1, slots or os.cpu_count() or 1)
        self.running = 0  # forward passes computing now (never above slots)
        self.peak_running = 0
        self._lru: OrderedDict[Hashable, tuple[DataclassInstance, int]] = OrderedDict()
        self.lasting: set[Hashable] = set()
        self._lock = threading.Lock()
        self._slot_free = threading.Condition(self._lock)
        # key -> [its lock, requests holding or waiting for it]; removed when the count is 0
        self._computing: dict[Hashable, list[Any]] = {}
        self._latest: dict[Hashable, Hashable] = {}  # session -> key it asked for last
        self._usage: dict[Hashable, tuple[float, float]] = {}  # session -> (seconds, when)
        self._waiting: dict[int, Hashable | None] = {}  # ticket -> its session, in arrival order
        self._tickets = 0
        self.watch = SlotWatch()  # when slots were taken and given back (``stuck``)

    def __len__(self) -> int:
        return len(self._lru)

    def _lookup(self, key: Hashable) -> DataclassInstance | None:
        with self._lock:
            if key not in self._lru:
                return None
            self._lru.move_to_end(key)
            return self._lru[key][0]

    def peek(self, key: Hashable) -> object:
        """The entry stored under ``key`` (the most recently used from now), or None: nothing is
        computed. For entries only a page can compute, such as a transcribed clip, whose audio
        the block route never receives."""
        return self._lookup(key)

    def _still_wanted(
        self, key: Hashable, session: Hashable | None, wanted: Callable[[], bool] | None
    ) -> bool:  # called with self._lock held
        if session is not None and self._latest.get(session, key) != key:
            return False
        return wanted is None or wanted()

    def usage(self, session: Hashable | None, now: float | None = None) -> float:
        """Seconds of forward pass ``session`` used lately (halving every USAGE_HALF_LIFE_S)."""
        if session not in self._usage:
            return 0.0
        used, at = self._usage[session]
        now = time.monotonic() if now is None else now
        return float(used * 0.5 ** ((now - at) / self.USAGE_HALF_LIFE_S))

    def _charge(self, session: Hashable | None, seconds: float) -> None:
        with self._lock:
            now = time.monotonic()
            for other in [s for s in self._usage if self.usage(s, now) < 0.001]:
                del self._usage[other]  # forgotten: the table holds recent sessions only
            if session is not None:
                self._usage[session] = (self.usage(session, now) + seconds, now)

    def _acquire_slot(
        self, key: Hashable, session: Hashable | None, wanted: Callable[[], bool] | None
    ) -> int:
        """Wait for a slot; its ticket, for ``_release_slot``. A free slot goes to the waiting
        request whose session used the least forward-pass time lately (then the earliest), and a
        session over its share (``usage_cap_s``) waits until it is under it again, unless it is
        alone (``_alone``): a visitor pasting long texts in a loop queues behind everyone else's
        sentences, and gets about USAGE_CAP_S × ln 2 / USAGE_HALF_LIFE_S of a core (0.14 with the
        defaults: a 512-token pass every ~3 s)."""
        with self._slot_free:
            ticket = self._tickets = self._tickets + 1
            self._waiting[ticket] = session
            self.watch.queued()
            try:
                while True:
                    if not self._still_wanted(key, session, wanted):
                        raise Superseded(key)
                    if (
                        self.running < self.slots
                        and self._first_in_line(ticket)
                        and (self.usage(session) <= self.usage_cap_s or self._alone(session))
                    ):
                        self.running += 1
                        self.peak_running = max(self.peak_running, self.running)
                        self.watch.taken(ticket)
                        return ticket
                    self._slot_free.wait(self.POLL_S)  # usage decays: look again
            finally:
                del self._waiting[ticket]
                self._slot_free.notify_all()

    def _alone(self, session: Hashable | None) -> bool:  # called with self._lock held
        """No other session waits or ran a pass lately (its decayed use under 1 ms): the share
        holds a session back only for others' sake, never on an otherwise idle server (one
        visitor typing SmolLM2 prompts in a row would otherwise wait for nobody)."""
        now = time.monotonic()
        if any(other != session for other in self._waiting.values()):
            return False
        return all(s == session or self.usage(s, now) < 0.001 for s in self._usage)

    def _first_in_line(self, ticket: int) -> bool:  # called with self._lock held
        now = time.monotonic()
        best = min(self._waiting, key=lambda t: (self.usage(self._waiting[t], now), t))
        return best == ticket

    def heavy(self, size: int, session: Hashable | None) -> bool:
        """A pass for the back lane (``server.lanes``, a lower OS priority): a big trace (a
        quarter of the budget or more, as ``_evict`` counts them: with the default 320 MB,
        MiniLM from ~290 tokens, SmolLM2 from ~280), or a session over its share. A class's
        short sentences keep the normal priority."""
        return size >= self.budget // 4 or self.usage(session) > self.usage_cap_s

    def _release_slot(self, ticket: int) -> None:
        with self._slot_free:
            self.running -= 1
            self.watch.given_back(ticket)
            self._slot_free.notify_all()

    def stuck(
        self, now: float | None = None, cpu: float | None = None, runnable: int | None = None
    ) -> str | None:
        """Why this store cannot compute, in plain words (``SlotWatch.stuck``), or None; also
        its lock not free within LOCK_WAIT_S (a leaked lock). Only reads: for the health check.
        ``now``, ``cpu`` and ``runnable`` default to the clock's, the process's and /proc's.
        /proc is read only to question a stuck verdict (runnable threads only ever clear one),
        so a healthy replica's check, every second, reads none of it."""
        verdict = self._stuck(now, cpu, runnable or 0)
        if verdict is None or runnable is not None:
            return verdict
        return self._stuck(now, cpu, runnable_threads())  # outside the lock

    def _stuck(self, now: float | None, cpu: float | None, runnable: int) -> str | None:
        if not self._lock.acquire(timeout=self.LOCK_WAIT_S):
            return f"the trace store's lock stayed taken for over {self.LOCK_WAIT_S:g} s"
        try:
            now = time.monotonic() if now is None else now
            cpu = time.process_time() if cpu is None else cpu
            return self.watch.stuck(now, cpu, len(self._waiting), self.slots, runnable)
        finally:
            self._lock.release()

    def _compute_in_slot(
        self,
        key: Hashable,
        compute: Callable[[], T],
        session: Hashable | None,
        wanted: Callable[[], bool] | None,
        expected: Callable[[], int] | None,
    ) -> T:
        """Wait for a slot, make room for the trace, compute it; the slot and the room are
        given back whatever is raised. Everything after the slot is taken sits inside the try:
        ``expected()`` tokenizes the visitor's text and may raise (a lone surrogate once wedged
        a replica by leaking its slots this way)."""
        slot = self._acquire_slot(key, session, wanted)
        size, started = 0, time.monotonic()
        try:
            size = expected() if expected else 0
            self._make_room(size)
            lane = self.lane if self.heavy(size, session) else None
            timed = partial(_timed, compute, key, size, lane is not None)
            return freeze(lane.run(timed) if lane is not None else timed())
        finally:
            with self._lock:
                self.reserved -= size
            self._charge(session, time.monotonic() - started)
            self._release_slot(slot)

    def get(
        self,
        key: Hashable,
        compute: Callable[[], T],
        session: Hashable | None = None,
        wanted: Callable[[], bool] | None = None,
        expected: Callable[[], int] | None = None,
        lasting: bool = False,
    ) -> T:
        if session is not None:
            with self._slot_free:
                self._latest[session] = key
                self._slot_free.notify_all()  # the session's older request, if waiting, drops
        try:
            found = self._lookup(key)
            if found is not None:
                return cast(T, found)  # a key always names what one compute makes
            with self._lock:
                entry = self._computing.setdefault(key, [threading.Lock(), 0])
                entry[1] += 1
            try:
                with entry[0]:  # a second session asking for the same key waits for the first
                    found = self._lookup(key)
                    if found is not None:
                        return cast(T, found)
                    trace = self._compute_in_slot(key, compute, session, wanted, expected)
                    self._store(key, trace, lasting)
                    release_free_memory()
                    return trace
            finally:
                with self._lock:
                    entry[1] -= 1
                    if entry[1] == 0:
                        del self._computing[key]
        finally:
            if session is not None:
                with self._lock:
                    if self._latest.get(session) == key:
                        del self._latest[session]
