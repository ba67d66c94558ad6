"""The HTTP route the attention explorer fetches a sentence's numbers from, one layer at a time.

Bytes go over plain HTTP, not through Streamlit's websocket: a layer the browser asks for costs
no script rerun, nothing already in the browser is sent again, and a view asks only for what it
draws next. The route recomputes nothing a session already has: it reads the traces the pages
share (``Traces``, wired to the app's caches by ui/routes.py), and a replica that never saw the
sentence computes it (the text travels with every request).

The app's own pages only (``server.visitors.admit``: a page token, same-origin headers, a rate
per page session), and the work is charged to that page's session in the trace store's fair
share: a newer sentence of the same session drops its older waiting request (409), and so does
a client that has gone (499, which nobody reads: it marks the drop in the access log). Every
refusal is JSON ``{"error": ...}`` with a plain sentence.

A transcribed clip (Whisper) comes through the same route: ``{"model", "clip", "layer", "part":
"cross", "frames": [lo, hi]}`` answers that layer's cross-attention (``pack.cross_block``), read
from the clip the page stored (``Traces.get_clip``); a clip no longer held answers 404 (``GONE``):
its audio never reaches the server again, so it cannot be computed here.

A long sentence (map mode, ``pack_map``) asks for one head at a time: part "map" (a stage pooled
to the screen) or "tile" (a window at full resolution), with the head, the stage, the view's
switches and the window, every field checked (``pack_map.head_request``) before any work.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TypeGuard

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from attention_core.core.family import Trace
from attention_core.core.tokens import MAX_CHARS, check_text
from attention_core.methods.pack import (
    AUDIO_PARTS,
    MAP_PARTS,
    PARTS,
    HeardClip,
    Part,
    cross_block,
    layer_block,
)
from attention_core.methods.pack_map import HeadRequest, head_block, head_request
from explorer import PATH
from server.trace_store import Superseded
from server.visitors import Refused, admit

REPLACED = "A newer request replaced this one."
GONE_CLIENT = 499  # the client closed the connection before its work started (nginx's code)
LEFT = "The page left before this was computed."
WATCH_S = 0.1  # how often a waiting request looks whether its client is still there
Page = tuple[str, Callable[[], bool]]  # the page's session and whether it still wants the work
GONE = (
    "The server no longer holds this clip's cross-attention (it restarted, or made room for "
    "newer clips). Reload the page to send it again."
)
MAX_CLIP_ID = 128  # a clip's id: e.g. a SHA-256 in hex and its frames


@dataclass(frozen=True)
class Traces:
    """Where the route reads traces from (the same store and models as the pages)."""

    models: Collection[str]  # the model keys a request may name
    model_error: Callable[[str], str | None]  # None when the model loads, else why not
    # (model, text, page) -> the shared forward pass, charged to the page's session; while it
    # waits, ``Superseded`` once the session asked for another or wanted() turned false
    get_trace: Callable[[str, str, Page | None], Trace]
    n_layers: Callable[[str], int | None] = lambda _: None  # a model's layers, if known cheaply
    # (model, clip id) -> the transcribed clip a page stored, None when it is not held; the
    # audio models a request may name with a clip (none: the route serves text alone)
    get_clip: Callable[[str, str], HeardClip | None] = lambda _model, _clip: None
    clip_models: Collection[str] = ()

    @property
    def max_body(self) -> int:
        return 4 * MAX_CHARS + 1024  # JSON-escaped text plus the small fields


def refusal(status: int, message: str) -> JSONResponse:
    """A route's refusal: ``{"error": message}``, never cached."""
    return JSONResponse(
        {"error": message}, status_code=status, headers={"Cache-Control": "no-store"}
    )


def json_object(body: bytes, max_bytes: int) -> dict[str, object]:
    """A request body read as one JSON object; ValueError with a plain reason."""
    if len(body) > max_bytes:
        raise ValueError("request too large")
    try:
        req = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ValueError("body must be JSON") from None
    if not isinstance(req, dict):
        raise ValueError("body must be a JSON object")
    return req


def parse_request(traces: Traces, body: bytes) -> tuple[str, str, int, Part]:
    """(model, text, layer, part) from a request body; ValueError with a plain reason."""
    return text_request(traces, json_object(body, traces.max_body))


def text_request(traces: Traces, req: dict[str, object]) -> tuple[str, str, int, Part]:
    """(model, text, layer, part) from a parsed request for a sentence's part."""
    model, text, layer, part = (req.get(k) for k in ("model", "text", "layer", "part"))
    if not isinstance(model, str) or model not in traces.models:
        raise ValueError(f"model must be one of {', '.join(traces.models)}")
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_CHARS:
        raise ValueError(f"text must be 1 to {MAX_CHARS:,} characters")
    check_text(text)  # valid Unicode: a lone surrogate is refused here, before any work
    if not _whole(layer):
        raise ValueError("layer must be a whole number")
    if not isinstance(part, str) or part not in PARTS + MAP_PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS + MAP_PARTS)}")
    return model, text, layer, part


def clip_request(traces: Traces, req: dict[str, object]) -> tuple[str, str, int, tuple[int, int]]:
    """(model, clip, layer, frames) from a parsed request for a clip's part ("cross");
    ValueError with a plain reason."""
    model, clip, layer, frames = (req.get(k) for k in ("model", "clip", "layer", "frames"))
    if not isinstance(model, str) or model not in traces.clip_models:
        raise ValueError(f"a clip's model must be one of {', '.join(traces.clip_models)}")
    if not isinstance(clip, str) or not 0 < len(clip) <= MAX_CLIP_ID or not clip.isascii():
        raise ValueError(f"clip must name a stored clip (1 to {MAX_CLIP_ID} ASCII characters)")
    if not _whole(layer):
        raise ValueError("layer must be a whole number")
    if not (isinstance(frames, list) and len(frames) == 2 and all(map(_whole, frames))):
        raise ValueError("frames must be two whole numbers [first, end]")
    return model, clip, layer, (frames[0], frames[1])


def _whole(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def clip_block(traces: Traces, body: bytes) -> bytes | None:
    """A stored clip's layer of cross-attention over the request's frames; None when the clip
    is not held (evicted, or stored by another server process)."""
    return held_block(traces, json_object(body, traces.max_body))


def held_block(traces: Traces, req: dict[str, object]) -> bytes | None:
    """``clip_block`` of a parsed request."""
    model, clip, layer, frames = clip_request(traces, req)
    heard = traces.get_clip(model, clip)
    return None if heard is None else cross_block(heard, layer, frames).data


def block_bytes(
    traces: Traces,
    model: str,
    text: str,
    layer: int,
    part: Part,
    page: Page | None = None,
    ask: HeadRequest | None = None,
) -> bytes:
    """The layer block of the sentence's trace (computed once per server, then shared), or
    the answer to ``ask`` (one head's "map" or "tile", ``pack_map.head_block``); the
    ``page``'s session is charged for the pass, which is dropped while waiting once the page's
    ``wanted()`` is false (``Superseded``)."""
    if traces.model_error(model):  # its text names server paths: for the pages' operator
        raise ValueError(f"The {model} model is not installed on this server.")
    n_layers = traces.n_layers(model)
    if n_layers is not None and not 0 <= layer < n_layers:  # refused before the pass
        raise ValueError(f"layer {layer} is outside 0..{n_layers - 1}")
    trace = traces.get_trace(model, text, page)
    return layer_block(trace, layer, part).data if ask is None else head_block(trace, ask)


async def watch(request: Request, gone: threading.Event) -> None:
    """Set ``gone`` once the client has closed the connection (cancelled when the work ends)."""
    while not await request.is_disconnected():
        await asyncio.sleep(WATCH_S)
    gone.set()


async def answer_block(traces: Traces, request: Request) -> Response:
    """The block route's answer: the layer's bytes, or a JSON refusal."""
    try:
        session = admit(request)
        req = json_object(await request.body(), traces.max_body)  # parsed once
        if req.get("part") in AUDIO_PARTS:
            return clip_answer(held_block(traces, req))
        model, text, layer, part = text_request(traces, req)
        # A map or a tile is computed under the view's switches: each field checked first.
        ask = head_request(req) if part in MAP_PARTS else None
    except Refused as err:
        return refusal(err.status, err.message)
    except ValueError as err:
        return refusal(400, str(err))
    gone = threading.Event()
    watcher = asyncio.create_task(watch(request, gone))
    try:
        page = (session, lambda: not gone.is_set())
        data = await run_in_threadpool(block_bytes, traces, model, text, layer, part, page, ask)
    except ValueError as err:
        return refusal(400, str(err))
    except Superseded:
        return refusal(GONE_CLIENT, LEFT) if gone.is_set() else refusal(409, REPLACED)
    finally:
        watcher.cancel()
    return raw(data)


def raw(data: bytes) -> Response:
    """Float32 bytes, never cached. Content-Encoding identity keeps Streamlit's gzip middleware
    off them: raw float32 shrinks by ~7 % and a 512-token layer (12.6 MB) cost 374 ms of CPU to
    compress."""
    headers = {"Cache-Control": "no-store", "Content-Encoding": "identity"}
    return Response(data, media_type="application/octet-stream", headers=headers)


def clip_answer(data: bytes | None) -> Response:
    """A clip's block, or 404 (``GONE``) when the clip is not held."""
    return refusal(404, GONE) if data is None else raw(data)


def routes(traces: Traces) -> list[Route]:
    """The explorer's one route, reading ``traces``."""

    async def block(request: Request) -> Response:
        return await answer_block(traces, request)

    return [Route(PATH, block, methods=["POST"])]
