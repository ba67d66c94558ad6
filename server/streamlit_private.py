"""Every read of Streamlit's private state, in one place (tested with Streamlit 1.67).

Four things the app needs have no public API:

- whether the current script run is still wanted (Streamlit was not yet asked to rerun or stop
  it): the trace store drops a waiting forward pass its session no longer wants;
- which widget values the browser sent with this run: a page reconnecting to another replica
  sends what its sliders show, which is newer than its URL;
- that the app routes with st.navigation from its first run: Streamlit sees the ``pages/``
  folder and routes a server's first run the legacy way, which ui.router then has to rerun
  (``navigation_only``);
- where a replica's CPU goes (``server.profile``, only under ATTENTION_PROFILE): each script run's
  start, the widget states sent with it and its end, and each cache miss (``watch_runs``).

Both read attributes whose names start with an underscore and may change in any release.
requirements.txt pins Streamlit to the tested minor version; ``check()`` (run by
tests/app/test_streamlit_private.py) fails loudly, naming the installed version, when an upgrade
moves them. At run time a moved attribute degrades gracefully (no early drop, no values sent);
a moved module stops the app at import, naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st
from streamlit.runtime.caching.cache_utils import CachedFunc
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner.script_runner import ScriptRunner, ScriptRunnerEvent
from streamlit.runtime.scriptrunner_utils.script_requests import (
    ScriptRequests,
    ScriptRequestType,
)
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx
from streamlit.runtime.state.common import user_key_from_element_id
from streamlit.runtime.state.safe_session_state import SafeSessionState
from streamlit.runtime.state.session_state import Serialized, SessionState, Value

from server import profile

TESTED = "1.67"  # the Streamlit minor version these reads were written against


class StreamlitInternalsChanged(RuntimeError):
    """Streamlit's private state no longer has the shape this module reads."""


def _changed(what: str) -> StreamlitInternalsChanged:
    return StreamlitInternalsChanged(
        f"Streamlit {st.__version__} changed {what} (server/streamlit_private.py was written "
        f"against Streamlit {TESTED}.x): update that module, then the pin in requirements.txt."
    )


def check() -> None:
    """Raise StreamlitInternalsChanged, naming the version, if an attribute read here moved."""
    requests = ScriptRequests()
    if getattr(requests, "_state", None) is not ScriptRequestType.CONTINUE:
        raise _changed("ScriptRequests._state (a run's pending rerun or stop request)")
    state = SessionState()
    widgets = getattr(state, "_new_widget_state", None)
    if not isinstance(getattr(widgets, "states", None), dict):
        raise _changed("SessionState._new_widget_state.states (the widget values sent)")
    if not hasattr(PagesManager, "uses_pages_directory"):
        raise _changed("PagesManager.uses_pages_directory (legacy pages/ routing)")
    if user_key_from_element_id("$$ID-0123abcd-layer") != "layer":
        raise _changed("the element id format (user_key_from_element_id)")


def navigation_only() -> None:
    """Tell Streamlit, before any session, what st.navigation tells it on the first run: the
    ``pages/`` folder is not legacy routing. Otherwise each server's first run is routed the
    old way and ``ui.router.ensure_framed`` reruns it (a rerun its visitor did not cause)."""
    PagesManager.uses_pages_directory = False


Run = tuple[str, Callable[[], bool]]  # a session id and its wanted()


def current_run() -> Run | None:
    """The session id of the script run on this thread and a ``wanted()`` that turns False once
    Streamlit was asked to rerun or stop that run; None outside a session's run (the explorer's
    HTTP route, a plain test)."""
    ctx = get_script_run_ctx(suppress_warning=True)
    requests = getattr(ctx, "script_requests", None)
    if ctx is None or requests is None:
        return None

    def wanted() -> bool:
        state = getattr(requests, "_state", ScriptRequestType.CONTINUE)
        return state is ScriptRequestType.CONTINUE

    return ctx.session_id, wanted


def _plain_value(value: Any) -> str | None:
    """A widget's value (a slider's number, a toggle, a text) as a URL writes it."""
    if isinstance(value, bool | str):
        return str(value)
    if isinstance(value, int | float):
        return str(int(value)) if float(value).is_integer() else str(value)
    return None


def _plain(proto: Any) -> str | None:
    """A slider's, toggle's or text box's value from its widget-state proto, as a URL would
    write it; None for other kinds (menus: their URL value is used)."""
    kind = proto.WhichOneof("value")
    if kind == "double_array_value" and len(proto.double_array_value.data) == 1:
        return _plain_value(proto.double_array_value.data[0])
    if kind in ("bool_value", "string_value", "int_value", "double_value"):
        return _plain_value(getattr(proto, kind))
    return None


def widget_values_sent() -> dict[str, str]:
    """The values (as a URL writes them) of the keyed widgets whose state the browser sent with
    this run; empty outside a session's run, and when Streamlit's internals moved."""
    ctx = get_script_run_ctx(suppress_warning=True)
    states = getattr(
        getattr(getattr(ctx, "session_state", None), "_state", None), "_new_widget_state", None
    )
    found: dict[str, str] = {}
    for element_id, state in getattr(states, "states", {}).items():
        key = user_key_from_element_id(element_id)
        value = None  # Serialized as the browser sent it, or already deserialized (a Value)
        if isinstance(state, Serialized):
            value = _plain(state.value)
        elif isinstance(state, Value):
            value = _plain_value(state.value)
        if key is not None and value is not None:
            found[key] = value
    return found


_ENDS = {
    ScriptRunnerEvent.SCRIPT_STOPPED_WITH_SUCCESS: "success",
    ScriptRunnerEvent.FRAGMENT_STOPPED_WITH_SUCCESS: "success",
    ScriptRunnerEvent.SCRIPT_STOPPED_FOR_RERUN: "rerun",
    ScriptRunnerEvent.SCRIPT_STOPPED_WITH_COMPILE_ERROR: "error",
}


def _on_event(runner: Any, event: Any = None, **kwargs: Any) -> None:
    """A script runner's event, on its script thread: a run's start or end (``server.profile``)."""
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None:
        return
    if event is ScriptRunnerEvent.SCRIPT_STARTED:
        profile.run_started(ctx.session_id, bool(kwargs.get("fragment_ids_this_run")))
    elif event in _ENDS:
        pages: dict[str, Any] = getattr(
            getattr(runner, "_pages_manager", None), "get_pages", dict
        )()
        page = pages.get(ctx.page_script_hash, {}).get("url_pathname", "") or "home"
        profile.run_stopped(_ENDS[event], page)


def watch_runs() -> None:
    """Report every script run and cache miss of this process to ``server.profile`` (called
    once, at start, only when profiling is on): wraps ScriptRunner's constructor (to hear its
    run events), SafeSessionState.on_script_will_rerun (the widget states each run was sent)
    and CachedFunc._handle_cache_miss (each computation a cache did not hold)."""
    if getattr(ScriptRunner, "_profiled", False):
        return
    init, will_rerun, miss = (
        ScriptRunner.__init__,
        SafeSessionState.on_script_will_rerun,
        CachedFunc._handle_cache_miss,
    )

    def runner_init(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.on_event.connect(_on_event, weak=False)

    def sent(self: Any, states: Any, *args: Any, **kwargs: Any) -> None:
        ctx = get_script_run_ctx(suppress_warning=True)
        widgets = getattr(states, "widgets", None) or []
        if ctx is not None:
            profile.run_sent(ctx.session_id, {w.id: w.SerializeToString() for w in widgets})
        will_rerun(self, states, *args, **kwargs)

    def handle_miss(self: Any, *args: Any, **kwargs: Any) -> Any:
        name = getattr(getattr(self, "_info", None), "func", None)
        with profile.step("cache miss", getattr(name, "__qualname__", "?")):
            return miss(self, *args, **kwargs)

    ScriptRunner.__init__ = runner_init  # type: ignore[method-assign]
    SafeSessionState.on_script_will_rerun = sent  # type: ignore[method-assign,assignment]
    CachedFunc._handle_cache_miss = handle_miss  # type: ignore[method-assign]
    ScriptRunner._profiled = True  # type: ignore[attr-defined]
