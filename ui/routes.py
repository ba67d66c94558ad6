"""The explorer's HTTP route wired to the app's own caches: the same loaded models and the same
trace store as the pages, so a layer the browser fetches is never computed twice; the clips the
Listen page transcribed and stored there (Whisper's cross-attention, part "cross",
``ui.listen.cache.held``); and the prepared downloads (``server.exports``). ``BODY_CAPS``: each
route's largest body, enforced while it streams in (``server.guard``)."""

from __future__ import annotations

from starlette.routing import Route

from attention_core.core.family import Trace
from attention_core.methods.pack import Part
from explorer import PATH
from server import api, exports
from ui.cache import MODELS, get_trace, model_config, model_error
from ui.listen.cache import held


def _trace(model: str, text: str, page: api.Page | None) -> Trace:
    return get_trace(model, text, page=page)


def _n_layers(model: str) -> int | None:
    config = model_config(model)
    return None if config is None else config.n_layers


TRACES = api.Traces(MODELS, model_error, _trace, _n_layers, get_clip=held, clip_models=("whisper",))
ROUTES: list[Route] = api.routes(TRACES) + exports.routes()
BODY_CAPS = {PATH: TRACES.max_body}


def block_bytes(model: str, text: str, layer: int, part: Part) -> bytes:
    """The bytes the route sends for this layer block (``api.block_bytes`` on the app's traces)."""
    return api.block_bytes(TRACES, model, text, layer, part)
