"""How far a forward pass has got, for a progress bar: ``with_progress(fn, callback)`` runs
``fn()`` with ``callback(done, total)`` called after each layer of any pass it makes, in
whatever thread runs it (a context variable, so two visitors' passes never report to each
other's bar). A pass calls ``report(done, total)``; outside ``with_progress`` that does nothing.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
Callback = Callable[[int, int], None]  # (layers done, layers in all)

_CALLBACK: contextvars.ContextVar[Callback | None] = contextvars.ContextVar(
    "attention_core_progress", default=None
)


def report(done: int, total: int) -> None:
    """Tell the caller's callback, if any, that ``done`` of ``total`` steps are done."""
    callback = _CALLBACK.get()
    if callback is not None:
        callback(done, total)


def with_progress(fn: Callable[[], T], callback: Callback) -> Callable[[], T]:
    """``fn`` wrapped so that, when called (in any thread), the passes it runs report to
    ``callback``; the callback is unset again when it returns or raises."""

    def run() -> T:
        token = _CALLBACK.set(callback)
        try:
            return fn()
        finally:
            _CALLBACK.reset(token)

    return run
