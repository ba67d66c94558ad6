"""The HTTP route the cross-attention view fetches one head from (until the view fetches a layer
at a time from the block route, ``server.api``: part "cross"): POST {id, layer, head} to
``CROSS_PATH``; the body of the answer is that head's rows [token, frame], float32, read from
the patterns this process mounted (``explorer.cross_store``). A pattern no longer held (evicted,
or the server restarted) answers 404 with a sentence the view shows. The app's own pages only,
as the block route (``server.visitors.admit``); every refusal is JSON ``{"error": ...}``.
"""

from __future__ import annotations

from typing import cast

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from explorer.cross_store import CROSS_PATH, CrossStore
from server.api import GONE, json_object, refusal
from server.visitors import Refused, admit

MAX_BODY = 1024  # {id, layer, head}: an id of 24 hex digits and two small numbers


def parse_request(body: bytes) -> tuple[str, int, int]:
    """(id, layer, head) from a request body; ValueError with a plain reason."""
    req = json_object(body, MAX_BODY)
    key, layer, head = (req.get(k) for k in ("id", "layer", "head"))
    if not isinstance(key, str) or not key:
        raise ValueError("id must name a mounted clip")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (layer, head)):
        raise ValueError("layer and head must be whole numbers")
    return key, cast(int, layer), cast(int, head)


def answer(store: CrossStore, body: bytes) -> Response:
    """The route's answer to ``body``: the head's bytes, 400 for a bad request, 404 (``GONE``)
    for a clip not held."""
    try:
        key, layer, head = parse_request(body)
        data = store.head(key, layer, head)
    except (ValueError, IndexError) as err:
        return refusal(400, str(err))
    if data is None:
        return refusal(404, GONE)
    # identity: no gzip of raw float32 (see server/api.py), and never cached by the browser
    headers = {"Cache-Control": "no-store", "Content-Encoding": "identity"}
    return Response(data, media_type="application/octet-stream", headers=headers)


def routes(store: CrossStore) -> list[Route]:
    """The cross-attention route, reading ``store``."""

    async def cross_head(request: Request) -> Response:
        try:
            admit(request)
        except Refused as err:
            return refusal(err.status, err.message)
        return answer(store, await request.body())

    return [Route(CROSS_PATH, cross_head, methods=["POST"])]
