"""The glossary on the pages: a term's sentence (``attention_core.lessons.glossary``) rides, as the
element's ``help`` (a hover "?"), on the first text of a page run that names it.

``start_run`` empties the run's memory; ``router.shared()``, which every page calls first, calls
it, so each full run of a page explains each term once, in the order the page writes its text.
The memory keeps where (file and line) each term was explained: text written again from that same
place (a loop, or a ``st.fragment`` rerun, which does not call ``shared()`` and so keeps the
memory of the full run) carries the hover again, so a fragment's redraw never loses it.

``say`` writes Markdown, ``note`` a caption, ``heading`` a title or header, ``metric`` a metric
(the hover on its label): each with the hover when its text names a term not yet explained.
``box`` writes st.info/st.warning/st.success, which take no ``help``: a caption right under the
box then carries the hover ("Words in the box above"). Text in the closed "For engineers"
expanders is written directly (not through here) and explains nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from attention_core.lessons.glossary import help_text, terms_in
from ui.state.entry import Entry, State

Area = DeltaGenerator | ModuleType  # as ui.show's, which draws its captions through here

# Modules that only pass a page's text on: the place that explains is their caller's.
_HERE = Path(__file__).parent
_PASSING = frozenset({__file__, str(_HERE / "show.py"), str(_HERE / "tour" / "common.py")})
BOX_NOTE = "Words in the box above"  # the caption under an info box that carries its hover


class Glossed(State):
    """Which terms this page run has explained, and where (``file:line`` of the text)."""

    seen: Entry[dict[str, str]] = Entry("glossary_seen", {})


GLOSSED = Glossed()


def start_run() -> None:
    """Forget what the last run explained (every page's full run starts here)."""
    GLOSSED.seen = {}


def _site() -> str:
    """``file:line`` of the page text being written: the first caller outside this module and
    the modules that only pass text on."""
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename in _PASSING:
        frame = frame.f_back
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def help_for(text: str, extra: str | None = None, site: str | None = None) -> str | None:
    """The hover for ``text``: ``extra`` (a help of the caller's own) and the sentences of the
    terms it names that this run has not explained elsewhere; marks them explained here."""
    here = site or _site()
    seen = dict(GLOSSED.seen)
    new = tuple(t for t in terms_in(text) if seen.setdefault(t.name, here) == here)
    GLOSSED.seen = seen
    parts = [p for p in (extra, help_text(new) if new else "") if p]
    return "\n\n".join(parts) or None


def say(text: str, where: Area = st, help: str | None = None, **kwargs: Any) -> None:
    """``where.markdown(text)``, hovering the terms it explains first."""
    where.markdown(text, help=help_for(text, help, _site()), **kwargs)


def note(text: str, where: Area = st, help: str | None = None, **kwargs: Any) -> None:
    """``where.caption(text)``, hovering the terms it explains first."""
    where.caption(text, help=help_for(text, help, _site()), **kwargs)


def heading(
    text: str,
    level: Literal["title", "header", "subheader"] = "subheader",
    where: Area = st,
    **kwargs: Any,
) -> None:
    """A title, header or subheader, hovering the terms it explains first."""
    getattr(where, level)(text, help=help_for(text, kwargs.pop("help", None), _site()), **kwargs)


def metric(label: str, value: Any, where: Area = st, **kwargs: Any) -> None:
    """``where.metric``, hovering the terms its label explains first."""
    hover = help_for(label, kwargs.pop("help", None), _site())
    where.metric(label, value, help=hover, **kwargs)


def box(
    text: str,
    kind: Literal["info", "warning", "success"] = "info",
    where: Area = st,
    **kwargs: Any,
) -> None:
    """An info (warning, success) box (``kwargs``: its icon); when it names terms not yet
    explained, a caption right under it carries their sentences (the boxes take no ``help``)."""
    getattr(where, kind)(text, **kwargs)
    hover = help_for(text, None, _site())
    if hover:
        where.caption(BOX_NOTE, help=hover)
