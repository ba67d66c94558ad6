"""Mounting the attention explorer from a page: the view it starts from (the session's settings),
the URL fields it keeps, and what the session learns when the browser reports a new view."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

import explorer
from attention_core.core.family import Trace
from server import profile
from ui import params
from ui.state.shared import Frame

# The sidebar's settings, which every page follows: the explorer's fields of the same names.
SHARED_FIELDS = (Frame.layer.key, Frame.head.key, Frame.hide_special.key)
OFF = {"causal": False, "scale": True, "temp": 1.0, "transpose": False, "q": -1, "k": -1}


def _take(key: str, fields: Sequence[str]) -> Callable[[], None]:
    """The callback that copies ``fields`` of the reported view into the session (checked as a
    link's values are; a value no control sends keeps the last good one)."""

    def take() -> None:
        reported = st.session_state[key].get("view") or {}
        for name in fields:
            if name in reported:
                with contextlib.suppress(ValueError):
                    st.session_state[name] = params.accept(name, reported[name])
        told(key, reported)

    return take


def told(key: str, reported: dict[str, Any]) -> None:
    """Remember the view the browser reported for the explorer ``key`` (``given`` reads it)."""
    st.session_state[f"_{key}_told"] = reported


def given(key: str, view: dict[str, Any]) -> dict[str, Any]:
    """The view to hand the browser: after the browser reported ``view`` itself, the view it was
    last handed, so the explorer's data (and the message carrying it, its script included) stays
    the same and nothing is sent again or redrawn; otherwise ``view``, remembered. This is the
    one place that tells an echo from news: the browser (explorer/js/state.js) takes every view
    it is handed that differs from the last one, and Streamlit runs it only when data changes."""
    last = st.session_state.get(f"_{key}_given")
    if last is not None and st.session_state.get(f"_{key}_told") == view:
        return dict(last)
    st.session_state[f"_{key}_given"] = view
    return view


def full(trace: Trace, model: str, text: str, key: str) -> Any:
    """The explorer with every control, its whole view kept in the session and the URL. A
    decoder's causal mask is its own, fixed on in the browser: never taken as the visitor's
    what-if (which would then stay switched on for an encoder), nor written into the URL."""
    fields = explorer.VIEW_FIELDS
    view = {name: st.session_state[name] for name in fields}
    if trace.config.causal:  # as the browser draws it (view.js): told back, it would rerun
        view["causal"] = True
    view = given(key, view)
    taken = [name for name in fields if not (name == "causal" and trace.config.causal)]
    defaults = {name: params.PARAMS[name].default for name in taken}  # what the URL keeps
    with profile.step("explorer", "header and mount"):  # the engine's header: roles, badges
        return explorer.mount(trace, model, text, view, defaults, _take(key, taken), key=key)


def shared_only(
    trace: Trace,
    model: str,
    text: str,
    key: str,
    stages: tuple[str, ...],
    switches: dict[str, Any] | None = None,
    controls: tuple[str, ...] | None = None,
    tell: bool = True,
) -> Any:
    """The explorer drawing ``stages`` under fixed ``switches`` (default: the trained model's);
    only the sidebar's layer, head and [CLS]/[SEP] setting are shared with the session (and
    not even those with ``tell=False``: a view that must not move the sidebar)."""
    view = {name: st.session_state[name] for name in SHARED_FIELDS} | OFF | (switches or {})
    view = given(key, view) if tell else view
    defaults = {name: params.PARAMS[name].default for name in SHARED_FIELDS}
    return explorer.mount(
        trace,
        model,
        text,
        view,
        defaults,
        _take(key, SHARED_FIELDS),
        key=key,
        stages=stages,
        controls=controls,
        tell=tell,
    )
