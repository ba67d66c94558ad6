"""An entry of the session state, declared once: ``Entry`` (its key, type and default), ``Url``
(an entry the link keeps, with the parser its text goes through) and ``State`` (a page family's
entries, as class attributes); and the parsers a link's text goes through.

Read and write an entry through its state's instance, ``FRAME.layer`` and ``FRAME.layer = 3``
(typed, the default when unset); on the class, ``Frame.layer`` is the entry itself: its ``key``
for the widget that holds it, ``keep()`` to carry it past a run that does not draw that widget.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Generic, Self, TypeVar, cast, overload

import streamlit as st

from attention_core.core.tokens import MAX_CHARS, valid_unicode

T = TypeVar("T")


class Entry(Generic[T]):
    """One entry of ``st.session_state``: its key, written here once, its type and default."""

    def __init__(self, key: str, default: T) -> None:
        self.key = key
        self.default = default  # what a read gives while it is unset (never stored by a read)

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> Self: ...
    @overload
    def __get__(self, obj: object, owner: type[Any]) -> T: ...
    def __get__(self, obj: object | None, owner: type[Any]) -> Self | T:
        if obj is None:
            return self
        return cast(T, st.session_state.get(self.key, self.default))

    def __set__(self, obj: object, value: T) -> None:
        st.session_state[self.key] = value

    def is_set(self) -> bool:
        return self.key in st.session_state

    def keep(self) -> None:
        """Assign the value again: Streamlit forgets a widget's value on a run that does not draw
        it (another page, a step without it), but keeps a value assigned in the script."""
        if self.key in st.session_state:
            st.session_state[self.key] = st.session_state[self.key]

    def forget(self) -> None:
        st.session_state.pop(self.key, None)


class Url(Entry[T]):
    """An entry the URL keeps: read from a link on a session's first run (``parse`` turns the
    link's text into a value, ValueError when it is not one), written back when not the
    default (ui.params)."""

    def __init__(self, key: str, default: T, parse: Callable[[str], T]) -> None:
        super().__init__(key, default)
        self.parse = parse


class State:
    """A page family's entries, as class attributes; ``PAGE`` names the page whose URL keeps its
    ``Url`` entries (None: every page's)."""

    PAGE: ClassVar[str | None] = None

    @classmethod
    def entries(cls) -> list[Entry[Any]]:
        return [value for value in vars(cls).values() if isinstance(value, Entry)]

    @classmethod
    def urls(cls) -> list[Url[Any]]:
        return [entry for entry in cls.entries() if isinstance(entry, Url)]


# --- how a link's text becomes a value ---------------------------------------------------------


def boolean(raw: str) -> bool:
    if raw in ("1", "true", "True"):
        return True
    if raw in ("0", "false", "False"):
        return False
    raise ValueError("must be 1 or 0")


def int_in(lo: int, hi: int | Callable[[], int]) -> Callable[[str], int]:
    """Whole numbers in [lo, hi]; ``hi`` may be read when a value is parsed (from the model)."""

    def parse(raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise ValueError("must be a whole number") from None
        top = hi() if callable(hi) else hi
        if not lo <= value <= top:
            raise ValueError(f"must be between {lo} and {top}")
        return value

    return parse


def float_in(lo: float, hi: float) -> Callable[[str], float]:
    def parse(raw: str) -> float:
        try:
            value = float(raw)
        except ValueError:
            raise ValueError("must be a number") from None
        if not lo <= value <= hi:  # also rejects nan
            raise ValueError(f"must be between {lo} and {hi}")
        return value

    return parse


def text(raw: str) -> str:
    if len(raw) > MAX_CHARS:
        raise ValueError(f"is longer than {MAX_CHARS:,} characters")
    if not valid_unicode(raw):
        raise ValueError("is not valid Unicode")
    return raw.replace("\x00", "")


def choice(*options: str) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        if raw not in options:
            raise ValueError(f"must be one of {', '.join(options)}")
        return raw

    return parse
