"""The HTTP route the attention explorer fetches a sentence's numbers from, one layer at a time.

Bytes go over plain HTTP, not through Streamlit's websocket: a layer the browser asks for costs
no script rerun, nothing already in the browser is sent again, and a view asks only for what it
draws next. The route recomputes nothing a session already has: it reads the shared trace store,
and a replica that never saw the sentence computes it (the text travels with every request).
"""

from __future__ import annotations

import json

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from attention_core.pack import PARTS, layer_block
from explorer import PATH
from ui.cache import MODELS, get_trace, model_error
from ui.params import MAX_CHARS

MAX_BODY = 4 * MAX_CHARS + 1024  # JSON-escaped text plus the small fields


def parse_request(body: bytes) -> tuple[str, str, int, str]:
    """(model, text, layer, part) from a request body; ValueError with a plain reason."""
    if len(body) > MAX_BODY:
        raise ValueError("request too large")
    try:
        req = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise ValueError("body must be JSON") from None
    if not isinstance(req, dict):
        raise ValueError("body must be a JSON object")
    model, text, layer, part = (req.get(k) for k in ("model", "text", "layer", "part"))
    if model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}")
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_CHARS:
        raise ValueError(f"text must be 1 to {MAX_CHARS:,} characters")
    if not isinstance(layer, int) or isinstance(layer, bool):
        raise ValueError("layer must be a whole number")
    if part not in PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS)}")
    return model, text, layer, part


def block_bytes(model: str, text: str, layer: int, part: str) -> bytes:
    """The layer block of the sentence's trace (computed once per server, then shared)."""
    error = model_error(model)
    if error:
        raise ValueError(error)
    return layer_block(get_trace(model, text), layer, part).data  # type: ignore[arg-type]


async def block(request: Request) -> Response:
    try:
        model, text, layer, part = parse_request(await request.body())
        data = await run_in_threadpool(block_bytes, model, text, layer, part)
    except ValueError as err:
        return PlainTextResponse(str(err), status_code=400)
    # Content-Encoding identity keeps Streamlit's gzip middleware off these bytes: raw float32
    # shrinks by ~7 % and a 512-token layer (12.6 MB) cost 374 ms of CPU to compress.
    headers = {"Cache-Control": "no-store", "Content-Encoding": "identity"}
    return Response(data, media_type="application/octet-stream", headers=headers)


ROUTES = [Route(PATH, block, methods=["POST"])]
