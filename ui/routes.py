"""The explorer's HTTP route wired to the app's own caches: the same loaded models and the same
trace store as the pages, so a layer the browser fetches is never computed twice; and the
cross-attention heads the Listen page mounted in this process (``explorer.cross_store.CROSS``)."""

from __future__ import annotations

from starlette.routing import Route

from attention_core.pack import Part
from explorer.cross_store import CROSS
from server import api, cross_blocks
from ui.cache import MODELS, get_trace, model_error

TRACES = api.Traces(MODELS, model_error, get_trace)
ROUTES: list[Route] = api.routes(TRACES) + cross_blocks.routes(CROSS)


def block_bytes(model: str, text: str, layer: int, part: Part) -> bytes:
    """The bytes the route sends for this layer block (``api.block_bytes`` on the app's traces)."""
    return api.block_bytes(TRACES, model, text, layer, part)
