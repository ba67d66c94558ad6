"""The ASGI middleware in front of every HTTP request: URLs and bodies bounded before they are
read, and every answer of the app's routes (under ``/api/``) JSON, a failure included.

- A URL (path and query) over ``MAX_URL`` bytes is answered 414 at once. 8 KB: Uvicorn's HTTP
  parser (h11) and HAProxy hold a request's line and headers in 16 KB, and every request a page
  makes repeats the page's URL in its ``Referer``, so a page's URL must fit twice; 8 KB still
  holds a 512-token English sentence (~3 KB encoded) with room to spare.
- A body is counted while it streams in (``receive`` wrapped): past its path's cap the request
  is answered 413, naming the limit, and the rest is never read. A ``Content-Length`` over the
  cap is answered before any of the body is read. The caps: each route's own (``body_caps``),
  Streamlit's upload route its ``server.maxUploadSize`` plus multipart framing, else
  ``DEFAULT_BODY``.
- Under ``/api/``: an exception escaping a route is answered 500 with a plain sentence (logged
  here for the operator, never sent), and a 4xx or 5xx that is not JSON (Starlette's 405, 404)
  is rewritten as ``{"error": ...}``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping

from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_URL = 8 * 1024
DEFAULT_BODY = 1024 * 1024  # any other path (Streamlit's own posts are small)
UPLOAD_PATH = "/_stcore/upload_file/"
UPLOAD_FRAMING = 2 * 1024 * 1024  # over Streamlit's own 1 MB margin: its check answers first
FAILED = "The server could not answer this request. Try again, or reload the page."
STATUS_WORDS = {
    404: "There is nothing at this address.",
    405: "This address takes POST requests only.",
}
LOG = logging.getLogger(__name__)


class BodyTooLarge(Exception):
    """A request body passed its cap while streaming in."""


def upload_cap() -> int:
    """Bytes an upload request may carry: Streamlit's ``server.maxUploadSize`` (megabytes) plus
    multipart framing, read when asked so that one setting governs both."""
    from streamlit import config  # the server's config, loaded by the time requests come

    return int(config.get_option("server.maxUploadSize")) * 1024 * 1024 + UPLOAD_FRAMING


def _answer(status: int, text: str, as_json: bool) -> tuple[Message, Message]:
    """The two messages of a short answer: JSON ``{"error": text}`` or plain text."""
    body = json.dumps({"error": text}).encode() if as_json else text.encode()
    kind = b"application/json" if as_json else b"text/plain; charset=utf-8"
    headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode())]
    headers.append((b"cache-control", b"no-store"))
    if status == 413:
        headers.append((b"connection", b"close"))  # the rest of the body is never read
    start = {"type": "http.response.start", "status": status, "headers": headers}
    return start, {"type": "http.response.body", "body": body}


def too_large(cap: int) -> str:
    return f"This request is larger than the {cap:,} bytes this address takes."


class Guard:
    """The middleware (``Middleware(Guard, body_caps={path: bytes})``)."""

    def __init__(
        self,
        app: ASGIApp,
        body_caps: Mapping[str, int],
        max_url: int = MAX_URL,
        uploads: Callable[[], int] = upload_cap,
    ) -> None:
        self.app, self.body_caps, self.max_url, self.uploads = app, body_caps, max_url, uploads

    def cap(self, path: str) -> int:
        if path in self.body_caps:
            return self.body_caps[path]
        return self.uploads() if path.startswith(UPLOAD_PATH) else DEFAULT_BODY

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        api = path.startswith("/api/")
        refusal = self.refusal(scope, path)
        if refusal is not None:
            for message in _answer(*refusal, as_json=api):
                await send(message)
            return
        await self.serve(scope, receive, send, api)

    def refusal(self, scope: Scope, path: str) -> tuple[int, str] | None:
        """(status, sentence) for a request refused before any of its body is read."""
        url = len(scope.get("raw_path") or path.encode()) + len(scope.get("query_string", b""))
        if url > self.max_url:
            return 414, f"This link is too long: over {self.max_url:,} bytes. Use a shorter text."
        for name, value in scope["headers"]:
            if name == b"content-length":
                if not value.isdigit():
                    return 400, "The Content-Length header is not a number."
                if int(value) > self.cap(path):
                    return 413, too_large(self.cap(path))
        return None

    async def serve(self, scope: Scope, receive: Receive, send: Send, api: bool) -> None:
        cap, seen, started, rewrite = self.cap(scope["path"]), 0, False, False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > cap:
                raise BodyTooLarge
            return message

        async def sending(message: Message) -> None:
            nonlocal started, rewrite
            if message["type"] == "http.response.start":
                started = True
                rewrite = api and message["status"] >= 400 and not _is_json(message)
                if rewrite:
                    for answer in _answer(message["status"], _words(message["status"]), True):
                        await send(answer)
                    return
            if not rewrite:  # a rewritten answer's own body is dropped
                await send(message)

        try:
            await self.app(scope, counted, sending)
        except BodyTooLarge:
            if not started:
                for message in _answer(413, too_large(cap), api):
                    await send(message)
        except Exception:
            if not api:
                raise
            LOG.exception("the route %s failed", scope["path"])
            if not started:
                for message in _answer(500, FAILED, True):
                    await send(message)


def _is_json(start: Message) -> bool:
    for name, value in start.get("headers", []):
        if name.lower() == b"content-type":
            return bytes(value).startswith(b"application/json")
    return False


def _words(status: int) -> str:
    if status in STATUS_WORDS:
        return STATUS_WORDS[status]
    return FAILED if status >= 500 else "The server could not take this request."
