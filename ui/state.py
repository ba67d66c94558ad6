"""Session state, declared once: every ``st.session_state`` entry the app keeps is an ``Entry``
with its key, its type and its default, declared as a class attribute of its page family's state
(``Frame`` below for what every page shares; ``ui/<family>/state.py`` for the rest). An entry the
URL keeps is a ``Url``, with the parser a link's text goes through (``ui.params`` gathers them).

Read and write an entry through its state's instance, ``FRAME.layer`` and ``FRAME.layer = 3``
(typed, the default when unset); on the class, ``Frame.layer`` is the entry itself: its ``key``
for the widget that holds it, ``keep()`` to carry it past a run that does not draw that widget.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, ClassVar, Generic, Self, TypeVar, cast, overload

import streamlit as st

from attention_core import DEFAULT_MODEL_NAME, ModelConfig
from attention_core.core.tokens import MAX_CHARS, valid_unicode
from ui.cache import DEFAULT_MODEL, PICKABLE, model_config
from ui.presets import DEFAULT_SENTENCE

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


def model_key(raw: str) -> str:
    """A model's key; the name links used before there was a choice still opens MiniLM."""
    if raw == DEFAULT_MODEL_NAME:
        return DEFAULT_MODEL
    return choice(*PICKABLE)(raw)


def current_model() -> str:
    """The model this session shows (the URL's ``model``, or the default)."""
    name = FRAME.model
    return name if name in PICKABLE else DEFAULT_MODEL


def _model(read: Callable[[ModelConfig], int]) -> Callable[[], int]:
    """A bound read from the session's model's config (no bound when it cannot be read: the page
    then says why the model is missing). The URL's ``model`` is read before the bounds."""
    return lambda: read(cfg) if (cfg := model_config(current_model())) else sys.maxsize


LAST_LAYER = _model(lambda cfg: cfg.n_layers - 1)
LAST_HEAD = _model(lambda cfg: cfg.n_heads - 1)
N_HEADS = _model(lambda cfg: cfg.n_heads)
D_MODEL = _model(lambda cfg: cfg.d_model)
LAST_TOKEN = _model(lambda cfg: cfg.max_tokens - 1)


# --- what every page shares --------------------------------------------------------------------


class Frame(State):
    """The sidebar's settings, which every page reads (the URL keeps them), and what the frame
    around every page (ui.router, ui.params, ui.sidebar) remembers between runs."""

    s = Url("s", DEFAULT_SENTENCE, text)  # the sentence
    model = Url("model", DEFAULT_MODEL, model_key)
    layer = Url("layer", 2, int_in(0, LAST_LAYER))
    head = Url("head", 0, int_in(0, LAST_HEAD))
    hide_special = Url("hide_special", False, boolean)
    preset: Entry[str | None] = Entry("preset", None)  # the sidebar's example menu
    # The frame's own bookkeeping
    url_read = Entry("_url_read", False)  # the link was read (a session's first run)
    url_warnings: Entry[tuple[str, ...]] = Entry("_url_warnings", ())  # what the link got wrong
    view_opened = Entry("_view_opened", False)  # the session's opening view was chosen
    sentence_seen: Entry[str | None] = Entry("_sentence_seen", None)  # the sentence last run
    picks: Entry[tuple[str, ...]] = Entry("_picks", ())  # the models picked, latest last
    picked = Entry("_picked", False)  # the picker moved: the next frame opens the pick
    shown_model: Entry[str | None] = Entry("_shown_model", None)  # the model the page shows
    # layer and head left on each model, to return to
    views: Entry[dict[str, tuple[int, int]]] = Entry("_views", {})


FRAME = Frame()


class Verify(State):
    """The verify buttons' (ui.text.verify, ui.listen.verify): the check asked for stays on
    screen until the sentence, model or clip changes."""

    run = Entry("verify_run", False)  # the button
    sentence: Entry[tuple[str, str] | None] = Entry("_verify_for", None)  # (model, text) checked
    clip: Entry[str | None] = Entry("_verify_clip", None)  # the hash of the clip checked


VERIFY = Verify()
