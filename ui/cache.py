"""Cached model and traces. Cached objects are shared by every session: their arrays are made
read-only, so no page can change what another visitor sees."""

from __future__ import annotations

import ctypes
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import fields, is_dataclass
from typing import TypeVar

import numpy as np
import streamlit as st

from attention_core import Model, ModelLoadError, Trace, WhatIf, load_model, trace_sentence
from attention_core.telling import TellingHead, telling_head
from ui.presets import curated

# The server-side list of models a visitor may choose: name -> local folder (None = packaged).
# Paths never come from the browser.
MODELS: dict[str, str | None] = {"all-MiniLM-L6-v2": None}
T = TypeVar("T")


@st.cache_resource(show_spinner="Loading the model…")
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


class TraceStore:
    """Traces shared by every session, least recently used first out once their arrays pass
    ``budget`` bytes (the newest always stays). Not st.cache_resource: its max_entries counts
    traces, and one 512-token trace holds ~230 MB where a 12-token one holds ~1 MB. Not
    st.cache_data either: that would pickle and copy the arrays on every rerun; read-only arrays
    protect them without the copy. A sentence several sessions ask for at once is computed once."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.nbytes = 0
        self._lru: OrderedDict[Hashable, tuple[Trace, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._computing: dict[Hashable, threading.Lock] = {}

    def __len__(self) -> int:
        return len(self._lru)

    def _lookup(self, key: Hashable) -> Trace | None:
        with self._lock:
            if key not in self._lru:
                return None
            self._lru.move_to_end(key)
            return self._lru[key][0]

    def get(self, key: Hashable, compute: Callable[[], Trace]) -> Trace:
        found = self._lookup(key)
        if found is not None:
            return found
        with self._lock:
            key_lock = self._computing.setdefault(key, threading.Lock())
        with key_lock:  # a second session asking for the same key waits for the first
            found = self._lookup(key)
            if found is not None:
                return found
            trace = _freeze(compute())
            size = nbytes(trace)
            with self._lock:
                self._lru[key] = (trace, size)
                self.nbytes += size
                while self.nbytes > self.budget and len(self._lru) > 1:
                    _, (_, dropped) = self._lru.popitem(last=False)
                    self.nbytes -= dropped
                self._computing.pop(key, None)
            release_free_memory()
            return trace


# Memory for cached traces; ATTENTION_TRACE_CACHE_MB overrides it (e.g. on a bigger server).
TRACE_BUDGET_MB = int(os.environ.get("ATTENTION_TRACE_CACHE_MB", "400"))


@st.cache_resource(show_spinner=False)
def trace_store() -> TraceStore:
    """The one store of this server process."""
    return TraceStore(TRACE_BUDGET_MB * 2**20)


def get_trace(model_name: str, text: str, whatif: WhatIf = WhatIf()) -> Trace:
    """The forward pass of ``text``, computed once per (model, text, switches) for all sessions
    and kept while the store's budget allows."""
    return trace_store().get(
        (model_name, text, whatif), lambda: trace_sentence(get_model(model_name), text, whatif)
    )


@st.cache_data(max_entries=64, show_spinner=False)
def get_telling_head(model_name: str, text: str) -> TellingHead | None:
    """The sentence's most telling head (attention_core.telling's rule), once per sentence."""
    return telling_head(get_trace(model_name, text))


def opening_view(model_name: str, text: str) -> tuple[int, int, int, int] | None:
    """(layer, head, query, key) a page opens on for ``text``: a preset's curated view, else
    its most telling head; None when there is nothing to show (no model, no word)."""
    preset = curated(text)
    if preset:
        return preset.layer, preset.head, preset.token, preset.key
    if not text.strip() or model_error(model_name):
        return None
    pick = get_telling_head(model_name, text)
    return (pick.layer, pick.head, pick.query, pick.key) if pick else None
