"""Cached model and traces. Cached objects are shared by every session: their arrays are made
read-only, so no page can change what another visitor sees."""

from __future__ import annotations

import ctypes
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, fields, is_dataclass
from typing import TypeVar

import numpy as np
import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from attention_core import Model, ModelLoadError, Trace, WhatIf, load_model, trace_sentence
from attention_core.telling import TellingHead, telling_head
from ui.presets import curated

# The server-side list of models a visitor may choose: name -> local folder (None = packaged).
# Paths never come from the browser.
MODELS: dict[str, str | None] = {"all-MiniLM-L6-v2": None}
T = TypeVar("T")


# One entry per server-side model: worst case len(MODELS) × ~90 MB (MiniLM-L6's float32 weights).
@st.cache_resource(max_entries=len(MODELS), show_spinner="Loading the model…")
def get_model(name: str) -> Model:
    """The loaded model; raises ModelLoadError (not cached) when it is missing or broken."""
    if name not in MODELS:
        raise ModelLoadError(f"Unknown model {name!r}; choose one of {', '.join(MODELS)}.")
    model = load_model(MODELS[name])
    for weight in model.weights.values():  # shared by every session: read-only
        weight.flags.writeable = False
    return model


def model_error(name: str) -> str | None:
    """None when the model loads, else the message explaining what is missing and how to fix it."""
    try:
        get_model(name)
    except ModelLoadError as err:
        return str(err)
    return None


def _freeze(obj: T) -> T:
    """Make every array of a dataclass read-only, also inside nested ones (a Trace's Tokens)."""
    for f in fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
        elif is_dataclass(value):
            _freeze(value)
    return obj


def nbytes(obj) -> int:
    """Bytes held by the arrays of a dataclass, nested ones included."""
    total = 0
    for f in fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, np.ndarray):
            total += value.nbytes
        elif is_dataclass(value):
            total += nbytes(value)
    return total


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc: nothing to call
        return None


_MALLOC_TRIM = _malloc_trim()


def release_free_memory() -> None:
    """Hand memory freed by the forward pass back to the system (glibc's malloc_trim). A
    512-token pass frees hundreds of MB of temporaries that malloc otherwise keeps: replaying
    4 × 512 and 4 × 128 tokens through a 400 MB store held 708 MB resident without it, 405-432
    MB with it, for 1-7 ms a trace."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


TRIM_EVERY_S = 10.0


def _trim_periodically(stop: threading.Event, every_s: float = TRIM_EVERY_S) -> None:
    """Every ``every_s`` seconds hand freed memory back (release_free_memory), until ``stop``.
    The store trims after its own passes, but other work frees large arrays too (hiding a word
    runs the sentence twice, figures at 512 tokens, other threads' temporaries): in a soak at
    1.18 GB one malloc_trim gave back 150 MB. Each call takes 0.2-7 ms."""
    while not stop.wait(every_s):
        release_free_memory()


class Superseded(Exception):
    """A waiting forward pass that its session no longer wants (it asked for a newer one)."""


class TraceStore:
    """Traces shared by every session, least recently used first out once their arrays pass
    ``budget`` bytes (the newest always stays). Not st.cache_resource: its max_entries counts
    traces, and one 512-token trace holds ~230 MB where a 12-token one holds ~1 MB. Not
    st.cache_data either: that would pickle and copy the arrays on every rerun; read-only arrays
    protect them without the copy. A sentence several sessions ask for at once is computed once.

    Fair under one heavy visitor: at most ``slots`` forward passes run at once (default the
    number of cores), the others wait for a slot. A session's newer sentence supersedes its
    older one: ``get(..., session=s)`` records the key as s's latest; a request still waiting for
    a slot whose session has since asked for another key, or whose ``wanted()`` turns false (the
    Streamlit run was told to rerun), raises ``Superseded`` instead of computing. A request
    already computing finishes (NumPy cannot be interrupted) and its trace is stored."""

    POLL_S = 0.05  # how often a waiting request re-asks ``wanted()``

    def __init__(self, budget: int, slots: int | None = None) -> None:
        self.budget = budget
        self.nbytes = 0
        self.slots = max(1, slots or os.cpu_count() or 1)
        self.running = 0  # forward passes computing now (never above slots)
        self.peak_running = 0
        self._lru: OrderedDict[Hashable, tuple[Trace, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._slot_free = threading.Condition(self._lock)
        # key -> [its lock, requests holding or waiting for it]; removed when the count is 0
        self._computing: dict[Hashable, list] = {}
        self._latest: dict[Hashable, Hashable] = {}  # session -> key it asked for last

    def __len__(self) -> int:
        return len(self._lru)

    def _lookup(self, key: Hashable) -> Trace | None:
        with self._lock:
            if key not in self._lru:
                return None
            self._lru.move_to_end(key)
            return self._lru[key][0]

    def _still_wanted(
        self, key: Hashable, session: Hashable | None, wanted: Callable[[], bool] | None
    ) -> bool:  # called with self._lock held
        if session is not None and self._latest.get(session, key) != key:
            return False
        return wanted is None or wanted()

    def _acquire_slot(
        self, key: Hashable, session: Hashable | None, wanted: Callable[[], bool] | None
    ) -> None:
        with self._slot_free:
            while True:
                if not self._still_wanted(key, session, wanted):
                    raise Superseded(key)
                if self.running < self.slots:
                    self.running += 1
                    self.peak_running = max(self.peak_running, self.running)
                    return
                self._slot_free.wait(self.POLL_S if wanted is not None else None)

    def _release_slot(self) -> None:
        with self._slot_free:
            self.running -= 1
            self._slot_free.notify_all()

    def get(
        self,
        key: Hashable,
        compute: Callable[[], Trace],
        session: Hashable | None = None,
        wanted: Callable[[], bool] | None = None,
    ) -> Trace:
        if session is not None:
            with self._slot_free:
                self._latest[session] = key
                self._slot_free.notify_all()  # the session's older request, if waiting, drops
        try:
            found = self._lookup(key)
            if found is not None:
                return found
            with self._lock:
                entry = self._computing.setdefault(key, [threading.Lock(), 0])
                entry[1] += 1
            try:
                with entry[0]:  # a second session asking for the same key waits for the first
                    found = self._lookup(key)
                    if found is not None:
                        return found
                    self._acquire_slot(key, session, wanted)
                    try:
                        trace = _freeze(compute())
                    finally:
                        self._release_slot()
                    self._store(key, trace)
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

    def _store(self, key: Hashable, trace: Trace) -> None:
        size = nbytes(trace)
        with self._lock:
            self._lru[key] = (trace, size)
            self.nbytes += size
            while self.nbytes > self.budget and len(self._lru) > 1:
                _, (_, dropped) = self._lru.popitem(last=False)
                self.nbytes -= dropped


# Memory for cached traces; ATTENTION_TRACE_CACHE_MB overrides it (e.g. on a bigger server).
TRACE_BUDGET_MB = int(os.environ.get("ATTENTION_TRACE_CACHE_MB", "400"))
# Forward passes at once; ATTENTION_TRACE_SLOTS overrides the default, the number of cores.
TRACE_SLOTS = int(os.environ.get("ATTENTION_TRACE_SLOTS", "0")) or None


# One entry (no arguments): the store, bounded by its own byte budget.
@st.cache_resource(max_entries=1, show_spinner=False)
def trace_store() -> TraceStore:
    """The one store of this server process (and the thread that trims freed memory)."""
    threading.Thread(
        target=_trim_periodically, args=(threading.Event(),), name="malloc-trim", daemon=True
    ).start()
    return TraceStore(TRACE_BUDGET_MB * 2**20, TRACE_SLOTS)


def get_trace(model_name: str, text: str, whatif: WhatIf = WhatIf()) -> Trace:
    """The forward pass of ``text``, computed once per (model, text, switches) for all sessions
    and kept while the store's budget allows. In a session's script run, a pass still waiting
    for a slot is dropped once the session has asked for another sentence (a rerun request):
    the run then stops at once so the newer one starts."""
    key = (model_name, text, whatif)

    def compute() -> Trace:
        return trace_sentence(get_model(model_name), text, whatif)

    ctx = get_script_run_ctx(suppress_warning=True)
    requests = getattr(ctx, "script_requests", None)
    if ctx is None or requests is None:  # the explorer's HTTP route, a test: no session
        return trace_store().get(key, compute)

    def wanted() -> bool:  # False once Streamlit was asked to rerun or stop this session's run
        return getattr(requests, "_state", ScriptRequestType.CONTINUE) is ScriptRequestType.CONTINUE

    try:
        return trace_store().get(key, compute, session=ctx.session_id, wanted=wanted)
    except Superseded:
        st.empty()  # a yield point: Streamlit raises its RerunException/StopException here
        return trace_store().get(key, compute)  # a rerun that does not preempt this run


# Worst case 64 × < 1 kB (a few ints and floats).
@st.cache_data(max_entries=64, show_spinner=False)
def get_telling_head(model_name: str, text: str) -> TellingHead | None:
    """The sentence's most telling head (attention_core.telling's rule), once per sentence."""
    return telling_head(get_trace(model_name, text))


@dataclass(frozen=True)
class OpeningView:
    """The head and cell a page opens on, and one sentence saying what they show."""

    layer: int
    head: int
    query: int
    key: int
    said: str  # e.g. a preset's claim, or the telling head's statement
    by_hand: bool  # curated for a preset (else found by attention_core.telling's rule)


def opening_view(model_name: str, text: str) -> OpeningView | None:
    """The view a page opens on for ``text``: a preset's curated view, else its most telling
    head; None when there is nothing to show (no model, no word)."""
    preset = curated(text)
    if preset:
        return OpeningView(preset.layer, preset.head, preset.token, preset.key, preset.claim, True)
    if not text.strip() or model_error(model_name):
        return None
    pick = get_telling_head(model_name, text)
    if pick is None:
        return None
    said = pick.statement[:1].upper() + pick.statement[1:] + "."
    return OpeningView(pick.layer, pick.head, pick.query, pick.key, said, False)
