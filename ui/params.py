"""Every setting that lives in the URL: the ``Url`` entries of every state in ``ui.state``
(``Frame``'s for every page, each page family's for its page), gathered here with their page.

On a session's first run the URL fills ``st.session_state`` (bad values fall back to the
default with a warning); on every run the current values are written back, so a copied link
reproduces the view, also after a server restart. Widgets use the parameter name as their key.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote_plus

import streamlit as st

from attention_core.core.tokens import MAX_CHARS as MAX_CHARS  # the pages and route read it here
from server.streamlit_private import widget_values_sent
from ui.state.beyond import Beyond
from ui.state.entry import State
from ui.state.listen import Listen
from ui.state.shared import FRAME, Frame
from ui.state.text import AllHeads, BuildHead, Compare, EmbeddingShift, HideWord, Pattern, Values
from ui.state.tour import Tour

# A sentence's share of a link, percent-encoded (link_too_long says why it is bounded).
LINK_MAX_BYTES = 6_000
# Whose entries the URL keeps, in the URL's order: the shared ones first (the model before the
# bounds that depend on it), then each page's.
STATES: tuple[type[State], ...] = (
    Frame,
    Pattern,
    Tour,
    AllHeads,
    Values,
    EmbeddingShift,
    HideWord,
    Beyond,
    Listen,
    BuildHead,
    Compare,
)


@dataclass(frozen=True)
class Param:
    """One URL parameter; ``page`` None means it is shared by every page."""

    default: Any
    parse: Callable[[str], Any]
    page: str | None = None


PARAMS: dict[str, Param] = {
    entry.key: Param(entry.default, entry.parse, state.PAGE)
    for state in STATES
    for entry in state.urls()
}


def _encode(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def accept(name: str, value: Any) -> Any:
    """A value for ``name`` sent by the browser, checked as a URL value is (ValueError if not)."""
    return PARAMS[name].parse(_encode(value))


def sent_by_browser() -> dict[str, Any]:
    """The settings whose widgets the browser sent values for with this run, parsed. A new
    session's first run has none, except when a page reconnects to another replica (its own
    died): its first action there sends what its sliders and boxes show, which is newer than
    its URL (the move itself is in it). Read from Streamlit's private session state
    (server/streamlit_private.py): empty if that changes."""
    found = {}
    for name, value in widget_values_sent().items():
        if name in PARAMS:
            with contextlib.suppress(ValueError):
                found[name] = PARAMS[name].parse(value)
    return found


def init_from_url() -> None:
    """Once per session: copy valid URL parameters into session state, warn about the rest.
    A value the browser's widget sent with this run is newer than the URL: it is kept."""
    if FRAME.url_read:
        return
    FRAME.url_read = True
    warnings, sent = [], sent_by_browser()
    st.session_state.update(sent)
    order = {name: i for i, name in enumerate(PARAMS)}  # model first: the bounds depend on it
    given = sorted(st.query_params.items(), key=lambda item: order.get(item[0], -1))
    for name, raw in given:
        param = PARAMS.get(name)
        if param is None:
            warnings.append(f"Ignored unknown URL parameter “{name}”.")
            continue
        if name in sent:
            continue
        try:
            st.session_state[name] = param.parse(raw)
        except ValueError as err:
            shown = raw if len(raw) <= 40 else raw[:40] + "…"
            warnings.append(f"Ignored URL parameter {name}={shown!r}: it {err}; using the default.")
    FRAME.url_warnings = tuple(warnings)


def defaults(page: str | None = None) -> None:
    """Give every shared parameter (and the page's own) its default unless already set."""
    for name, param in PARAMS.items():
        if param.page in (None, page):
            st.session_state.setdefault(name, param.default)


def link_too_long(text: str) -> str | None:
    """Why ``text`` stays out of the page's link, or None when it fits: servers refuse a
    request line past ~16 KB (uvicorn's and HAProxy's buffers; the app's own guard refuses URLs
    past 8 KB), so a link carrying it would open on an error instead of the page."""
    size = len(quote_plus(text))
    if size <= LINK_MAX_BYTES:
        return None
    return (
        f"This text is too long to keep in the page's link ({size / 1000:.0f} kB once "
        f"encoded; a link holds up to {LINK_MAX_BYTES / 1000:.0f} kB of it), so the link "
        "leaves it out: to share this view, share the text itself."
    )


def write_url(page: str | None) -> str | None:
    """Mirror the shared and this page's settings into the URL (defaults left out, except s,
    which is left out when too long for a link). Returns why it was left out, or None."""
    values, notice = {}, None
    for name, param in PARAMS.items():
        if param.page not in (None, page) or name not in st.session_state:
            continue
        value = st.session_state[name]
        if name == Frame.s.key and (notice := link_too_long(_encode(value))):
            continue
        if name == Frame.s.key or value != param.default:
            values[name] = _encode(value)
    if dict(st.query_params) != values:
        st.query_params.from_dict(values)
    return notice
