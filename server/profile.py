"""Where a replica's CPU goes, step by step: every script run (its page, why it ran, how it ended,
its CPU), every cache miss and forward pass inside it, every HTTP request beside them. Off unless
``ATTENTION_PROFILE`` names a folder; then each replica appends JSON lines to
``<folder>/profile-<pid>.jsonl`` (``python -m bench arrivals`` turns it on and reads them back).

A run's CPU is its script thread's own clock (``time.thread_time``), so two visitors' runs never
blur; a pass on the back lane is counted on the lane's thread, as its own step. What no step
holds (Streamlit's event loop sending the page's messages, serving its files) is the process's
clock minus the steps', which the bench prints as "outside any step".

Never logged: a visitor's text. A run names its page and the keys of the widgets that changed; a
pass names its model and its token count.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ENV = "ATTENTION_PROFILE"

_lock = threading.Lock()
_local = threading.local()  # .run: the open run's record on a script thread
_last_widgets: dict[str, dict[str, bytes]] = {}  # session -> widget id -> its sent state


def folder() -> Path | None:
    """The folder profiles go to, or None when profiling is off."""
    where = os.environ.get(ENV, "").strip()
    return Path(where) if where else None


def write(record: Mapping[str, Any]) -> None:
    """Append one JSON line to this process's profile (a no-op when profiling is off)."""
    where = folder()
    if where is None:
        return
    line = json.dumps({"t": round(time.time(), 3), **record}, separators=(",", ":"))
    with _lock, open(where / f"profile-{os.getpid()}.jsonl", "a", encoding="utf-8") as out:
        out.write(line + "\n")


@contextmanager
def step(kind: str, name: str, **fields: Any) -> Iterator[None]:
    """Time the block on this thread's CPU clock and the wall clock, and write it as a step
    (``kind``: "cache miss", "pass", "request"); inside a script run it is also named in the
    run's record. Costs two clock reads when profiling is off."""
    if folder() is None:
        yield
        return
    cpu, wall = time.thread_time(), time.perf_counter()
    try:
        yield
    finally:
        cpu_ms = (time.thread_time() - cpu) * 1000
        record = {"kind": kind, "name": name, "cpu_ms": round(cpu_ms, 2)}
        record |= {"wall_ms": round((time.perf_counter() - wall) * 1000, 2), **fields}
        run = getattr(_local, "run", None)
        if run is not None:
            record["session"] = run["session"]
            run["steps"].append(f"{kind}: {name} {cpu_ms:.0f} ms")
        write(record)


def why(session: str, sent: Mapping[str, bytes] | None, fragment: bool) -> str:
    """Why a run ran, from the widget states its browser sent (None: none were) against the
    session's last: its first run ("arrival"), the widgets whose state changed (or, the first
    time a browser sends its widgets' states, which widgets it sent: one of them moved), "no
    widget changed" (a URL, a reconnect), or none sent at all (a rerun the app asked for)."""
    where = "fragment, " if fragment else ""
    if session not in _last_widgets:  # its first run
        _last_widgets[session] = dict(sent or {})
        return "arrival"
    if sent is None:
        return where + "no widget states sent (a rerun the app asked for)"
    last = _last_widgets.get(session, {})
    _last_widgets[session] = dict(sent)
    changed = sorted(_short(k) for k, v in sent.items() if k in last and last[k] != v)
    if changed:
        return where + "widgets: " + ", ".join(changed)
    first = sorted(_short(k) for k in sent if k not in last)  # its first states: which moved
    return where + ("widgets first sent: " + ", ".join(first) if first else "no widget changed")


def _short(element_id: str) -> str:
    """A widget's key (``$$ID-<hash>-layer`` -> ``layer``), else its id's last part."""
    return element_id.rsplit("-", 1)[-1] if element_id.startswith("$$ID") else element_id[-12:]


def run_started(session: str, fragment: bool) -> None:
    """A script run begins on this thread."""
    _local.run = {"session": session[:8], "fragment": fragment, "steps": [], "sent": None}
    _local.run |= {"sid": session, "cpu": time.thread_time(), "wall": time.perf_counter()}


def run_sent(session: str, sent: Mapping[str, bytes]) -> None:
    """The widget states this run's browser sent (Streamlit applies them after the start)."""
    run = getattr(_local, "run", None)
    if run is not None and run["sid"] == session:
        run["sent"] = dict(sent)


def run_stopped(how: str, page: str) -> None:
    """The run on this thread ended (``how``: success, rerun, error) on ``page``: write it."""
    run = getattr(_local, "run", None)
    _local.run = None
    if run is None:
        return
    cpu_ms = (time.thread_time() - run.pop("cpu")) * 1000
    wall_ms = (time.perf_counter() - run.pop("wall")) * 1000
    reason = why(run.pop("sid"), run.pop("sent"), run["fragment"])
    times = {"cpu_ms": round(cpu_ms, 2), "wall_ms": round(wall_ms, 2)}
    write({"kind": "run", "page": page, "how": how, "why": reason, **times} | run)


def _path_kind(path: str) -> str:
    """A request's path as a kind, never its query: the page's files, the health check, a
    route, a page."""
    if path.startswith("/static/") or path.endswith((".js", ".css", ".woff2", ".svg", ".png")):
        return "static file"
    if path.startswith("/_stcore/"):
        return path.removeprefix("/_stcore/")
    if path.startswith("/api/"):
        return "route " + path
    return "page"


class ProfileMiddleware:
    """Every HTTP request as a step: its kind (``_path_kind``), wall time and the CPU the event
    loop's thread used meanwhile (other requests' share included, so exact only one at a time).
    Mounted only when profiling is on."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        with step("request", _path_kind(scope.get("path", ""))):
            await self.app(scope, receive, send)
