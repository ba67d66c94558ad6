"""The replica's health check says when it cannot compute.

Streamlit's own ``/_stcore/health`` answers 200 as long as its event loop runs, even when every
forward-pass slot of the trace store is held for good: HAProxy and serve.sh's supervisor then
keep a wedged replica. ``HealthMiddleware`` answers that path itself with 503 and a short JSON
reason while ``stuck()`` gives one (``TraceStore.stuck``), and hands it to Streamlit otherwise.
It takes a callable, not the store, so this module needs no Streamlit: app.py passes one that
asks the process's store (``ui.cache.trace_store``).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

HEALTH_PATH = "/_stcore/health"  # what HAProxy, serve.sh and deploy/'s readiness probe ask


class HealthMiddleware:
    """503 ``{"status": "stuck", "reason": ...}`` on GET/HEAD of HEALTH_PATH while ``stuck()``
    returns a reason; every other request, and a healthy check, goes on unchanged."""

    def __init__(self, app: ASGIApp, stuck: Callable[[], str | None]) -> None:
        self.app = app
        self.stuck = stuck

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["path"] == HEALTH_PATH
            and scope["method"] in ("GET", "HEAD")
        ):
            reason = self.stuck()
            if reason is not None:
                await _unhealthy(scope, send, reason)
                return
        await self.app(scope, receive, send)


async def _unhealthy(scope: Scope, send: Send, reason: str) -> None:
    body = json.dumps({"status": "stuck", "reason": reason}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
    ]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})
