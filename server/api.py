"""The HTTP route the attention explorer fetches a sentence's numbers from, one layer at a time.

Bytes go over plain HTTP, not through Streamlit's websocket: a layer the browser asks for costs
no script rerun, nothing already in the browser is sent again, and a view asks only for what it
draws next. The route recomputes nothing a session already has: it reads the traces the pages
share (``Traces``, wired to the app's caches by ui/routes.py), and a replica that never saw the
sentence computes it (the text travels with every request).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from attention_core import Trace
from attention_core.pack import PARTS, Part, layer_block
from attention_core.tokens import MAX_CHARS, check_text
from explorer import PATH


@dataclass(frozen=True)
class Traces:
    """Where the route reads traces from (the same store and models as the pages)."""

    models: Collection[str]  # the model keys a request may name
    model_error: Callable[[str], str | None]  # None when the model loads, else why not
    get_trace: Callable[[str, str], Trace]  # (model, text) -> its shared forward pass

    @property
    def max_body(self) -> int:
        return 4 * MAX_CHARS + 1024  # JSON-escaped text plus the small fields


def json_object(body: bytes, max_bytes: int) -> dict[str, object]:
    """A request body read as one JSON object; ValueError with a plain reason."""
    if len(body) > max_bytes:
        raise ValueError("request too large")
    try:
        req = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise ValueError("body must be JSON") from None
    if not isinstance(req, dict):
        raise ValueError("body must be a JSON object")
    return req


def parse_request(traces: Traces, body: bytes) -> tuple[str, str, int, Part]:
    """(model, text, layer, part) from a request body; ValueError with a plain reason."""
    req = json_object(body, traces.max_body)
    model, text, layer, part = (req.get(k) for k in ("model", "text", "layer", "part"))
    if not isinstance(model, str) or model not in traces.models:
        raise ValueError(f"model must be one of {', '.join(traces.models)}")
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_CHARS:
        raise ValueError(f"text must be 1 to {MAX_CHARS:,} characters")
    check_text(text)  # valid Unicode: a lone surrogate is refused here, before any work
    if not isinstance(layer, int) or isinstance(layer, bool):
        raise ValueError("layer must be a whole number")
    if part not in PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS)}")
    return model, text, layer, part


def block_bytes(traces: Traces, model: str, text: str, layer: int, part: Part) -> bytes:
    """The layer block of the sentence's trace (computed once per server, then shared)."""
    error = traces.model_error(model)
    if error:
        raise ValueError(error)
    return layer_block(traces.get_trace(model, text), layer, part).data


def routes(traces: Traces) -> list[Route]:
    """The explorer's one route, reading ``traces``."""

    async def block(request: Request) -> Response:
        try:
            model, text, layer, part = parse_request(traces, await request.body())
            data = await run_in_threadpool(block_bytes, traces, model, text, layer, part)
        except ValueError as err:
            return PlainTextResponse(str(err), status_code=400)
        # Content-Encoding identity keeps Streamlit's gzip middleware off these bytes: raw
        # float32 shrinks by ~7 % and a 512-token layer (12.6 MB) cost 374 ms of CPU to compress.
        headers = {"Cache-Control": "no-store", "Content-Encoding": "identity"}
        return Response(data, media_type="application/octet-stream", headers=headers)

    return [Route(PATH, block, methods=["POST"])]
