"""The explorer in the Streamlit app: a components-v2 component whose script is the bundled
``explorer/js/streamlit.js`` (``explorer.bundle.module``: the committed esbuild bundle
``explorer/dist/streamlit.js``), registered once per process, and the mounts the pages call.
The numbers travel over the HTTP route at ``explorer.PATH`` (served by ``server/api.py`` from the
trace store), one layer block at a time, fetched by the browser with the page's token
(``explorer.page_token``: the routes serve the app's own pages only); a transcribed clip's
cross-attention too (part "cross", from the clip the page stored).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import numpy as np
import streamlit as st
from numpy.typing import NDArray
from streamlit.runtime.scriptrunner import get_script_run_ctx

from attention_core import ModelConfig
from attention_core.core.family import Trace
from attention_core.methods.pack import (
    MAX_TILE,
    HeardClip,
    cross_block,
    cross_header,
    float32_bytes,
    header,
)
from explorer import CSS, PATH, VIEW_FIELDS, check_stages
from explorer.bundle import module
from explorer.page_token import mint


@cache
def _renderer() -> Callable[..., Any]:
    return st.components.v2.component(
        "attention_explorer", js=module("streamlit"), css=CSS.read_text()
    )


def page_token() -> str:
    """The token the browser sends the routes: this page's Streamlit session, signed; empty
    outside a session's script run (the routes then refuse, as for any other stranger)."""
    ctx = get_script_run_ctx(suppress_warning=True)
    return mint(ctx.session_id) if ctx is not None else ""


def mount(
    trace: Trace,
    model: str,
    text: str,
    view: dict[str, Any],
    defaults: dict[str, Any],
    on_change: Callable[[], None],
    key: str,
    stages: tuple[str, ...] | None = None,
    controls: tuple[str, ...] | None = None,
    tell: bool = True,
) -> Any:
    """Draw the explorer for ``text``'s trace starting at ``view`` (the VIEW_FIELDS); the
    browser mirrors the fields named in ``defaults`` into the URL at once. When the
    visitor changes the view, the browser redraws first and then reports the new view
    (``st.session_state[key]["view"]``), debounced, and ``on_change`` runs before the rerun.
    ``stages`` picks panels (of explorer.STAGES: scores, scaled, masked, pattern, weighted,
    rollout; default the first four; a bad name is a ValueError), ``controls`` which of the
    VIEW_FIELDS' controls show; default all. ``tell=False``: the browser never reports."""
    data: dict[str, Any] = {
        "api": PATH.lstrip("/"),  # relative: works behind a proxy's path prefix too
        "token": page_token(),
        "model": model,
        "text": text,
        "header": header(trace),
        "view": {name: view[name] for name in VIEW_FIELDS},
        "defaults": dict(defaults),  # the URL keeps these fields, left out at their default
    }
    if stages:
        data["stages"] = list(check_stages(stages))
    if controls is not None:
        data["controls"] = list(controls)
    if not tell:
        data["tell"] = False
    return _renderer()(data=data, key=key, on_view_change=on_change)


def grid_data(
    trace: Trace,
    model: str,
    text: str,
    rows: list[tuple[int, list[int]]],
    metrics: dict[str, list[list[float | None]]],
    hide_special: bool,
) -> dict[str, Any]:
    """What ``mount_grid`` hands the browser (JSON-ready): the header, the heads drawn, their
    metrics and where the grid fetches its layer blocks."""
    return {
        "mode": "grid",
        "api": PATH.lstrip("/"),
        "token": page_token(),
        "model": model,
        "text": text,
        "header": header(trace),
        "rows": [{"layer": layer, "heads": heads} for layer, heads in rows],
        "metrics": metrics,
        "hide_special": hide_special,
        "max_tile": MAX_TILE,  # thumbnails pooled to this many pixels a side, as the engine does
    }


def mount_grid(
    trace: Trace,
    model: str,
    text: str,
    rows: list[tuple[int, list[int]]],
    metrics: dict[str, list[list[float | None]]],  # None: nothing to measure (one token)
    hide_special: bool,
    on_open: Callable[[], None],
    key: str,
) -> Any:
    """Every head in ``rows`` ((layer, heads in order) pairs) as a small pattern, with the
    engine's summary ``metrics`` ([l][h] by label) on hover. A click on a head sets the trigger
    ``st.session_state[key]["open"]`` = {layer, head} and runs ``on_open``. A token pinned in
    the bar above the grid makes every tile show only its row or column (in the browser)."""
    data = grid_data(trace, model, text, rows, metrics, hide_special)
    return _renderer()(data=data, key=key, on_open_change=on_open)


def mount_scores(
    scores_qk: NDArray[np.float32],
    tokens: Sequence[str],
    d_k: int,
    switches: dict[str, Any],
    title: str,
    key: str,
) -> Any:
    """One head's softmax pattern drawn from raw scores sent with the view itself (a small
    pattern computed on the spot, not a cached trace): ``switches`` gives scale, temp, causal."""
    n = len(tokens)
    if scores_qk.shape != (n, n):
        raise ValueError(f"scores shape {scores_qk.shape} does not match {n} tokens")
    shapes = {
        "tokens": list(tokens),
        "special": [False] * n,
        "kept_hiding_special": list(range(n)),
        "n_layers": 1,
        "n_heads": 1,
        "d_head": d_k,
        "n_tokens": n,
    }
    view = {"layer": 0, "head": 0, "transpose": False, "hide_special": False, "q": -1, "k": -1}
    data = {
        "inline": base64.b64encode(float32_bytes(scores_qk)).decode("ascii"),
        "header": shapes,
        "view": view | {name: switches[name] for name in ("scale", "temp", "causal")},
        "defaults": {},
        "stages": ["pattern"],
        "controls": [],
        "title": title,
        "tell": False,
        "api": "",
        "model": "",
        "text": "",
    }
    return _renderer()(data=data, key=key)


def mount_step(
    pattern_lhk: NDArray[np.float32],
    tokens: Sequence[str],
    n_kv_heads: int,
    layer: int,
    key: str,
) -> Any:
    """A decoder's newest token's attention over the ``tokens`` so far, [layer, head, key], one
    row per head (grouped by the key/value head they share), drawn in the browser from every
    layer's rows sent with the view: the layer switches there without a rerun."""
    n_layers, n_heads, n = pattern_lhk.shape
    if n != len(tokens) or n_heads % n_kv_heads:
        raise ValueError(
            f"pattern shape {pattern_lhk.shape} does not match {len(tokens)} tokens "
            f"and {n_kv_heads} key/value heads"
        )
    data = {
        "mode": "step",
        "rows": base64.b64encode(float32_bytes(pattern_lhk)).decode("ascii"),
        "tokens": list(tokens),
        "n_layers": n_layers,
        "n_heads": n_heads,
        "n_kv_heads": n_kv_heads,
        "layer": layer,
    }
    return _renderer()(data=data, key=key)


def pool_mel(mel_ft: NDArray[np.float32], lo: int, hi: int) -> NDArray[np.float32]:
    """The log-mel [bins, 10 ms frames] over the span lo..hi of 20 ms frames (cross-attention's
    frames: the encoder halves the time), each 20 ms the mean of its two 10 ms frames:
    [bins, hi - lo], float32."""
    if not 0 <= lo < hi or 2 * hi > mel_ft.shape[-1]:
        raise ValueError(f"span {lo}..{hi} (20 ms) is not inside the mel's {mel_ft.shape}")
    pairs = mel_ft[:, 2 * lo : 2 * hi].reshape(mel_ft.shape[0], hi - lo, 2)  # [m, f, 2]
    return pairs.astype(np.float32).mean(axis=-1, dtype=np.float32)


# The largest opening layer sent with a cross-attention view, in float32 bytes (a 5 s clip of 15
# tokens: 90 KB). Fetched instead, its answer waited ~0.3 s for the browser's main thread behind
# the page's other charts; past this (a 30 s clip of 94 tokens: 3.4 MB) it is fetched, so the
# page's message stays small.
OPENING_BYTES = 2**20


def cross_data(
    heard: HeardClip,
    config: ModelConfig,
    frames: tuple[int, int],
    view: dict[str, int],
    clip: str,
    named: Sequence[tuple[int, int]] = (),
    caption: str = "",
    mel_mf: NDArray[np.float32] | None = None,
    model: str = "whisper",
) -> dict[str, Any]:
    """What ``mount_cross`` hands the browser (JSON-ready): where its layer blocks come from (the
    block route at ``PATH``, part "cross", for the clip the page stored as ``clip`` over the 20 ms
    ``frames`` [first, end)), the header (``pack.cross_header``: the text tokens, the layers and
    heads, the frames and the first one's place in the clip), the view {layer, head, token}, and
    ``mel_mf`` [bins, frames of the span] as float32 base64 when given. The view's layer block
    (``pack.cross_block``, every head) goes with it as float32 base64 ("opening") when it is
    ``OPENING_BYTES`` or fewer, so the view draws at once; the browser asks the route for the
    rest, as for a longer clip's opening layer."""
    said = cross_header(heard, config, frames)
    the_view = {name: int(view[name]) for name in ("layer", "head", "token")}
    bounds = {"layer": said["n_layers"], "head": said["n_heads"], "token": said["n_tokens"]}
    if not all(0 <= the_view[name] < top for name, top in bounds.items()):
        raise ValueError(f"view {the_view} is not inside {bounds}")
    if mel_mf is not None and (mel_mf.ndim != 2 or mel_mf.shape[1] != said["n_frames"]):
        raise ValueError(f"mel shape {mel_mf.shape} does not match {said['n_frames']} frames")
    data: dict[str, Any] = {
        "mode": "cross",
        "api": PATH.lstrip("/"),  # relative: works behind a proxy's path prefix too
        "token": page_token(),
        "model": model,
        "clip": clip,
        "frames": [int(frames[0]), int(frames[1])],
        "header": said,
        "view": the_view,
        "named": [[int(layer), int(head)] for layer, head in named],
        "caption": caption,
    }
    opening = cross_block(heard, the_view["layer"], frames).data
    if len(opening) <= OPENING_BYTES:
        data["opening"] = base64.b64encode(opening).decode("ascii")
    if mel_mf is not None:
        mel = base64.b64encode(float32_bytes(mel_mf)).decode("ascii")
        data |= {"mel": mel, "n_bins": int(mel_mf.shape[0])}
    return data


def mount_cross(
    heard: HeardClip,
    config: ModelConfig,
    frames: tuple[int, int],
    view: dict[str, int],
    on_change: Callable[[], None],
    key: str,
    clip: str,
    named: Sequence[tuple[int, int]] = (),
    caption: str = "",
    mel_mf: NDArray[np.float32] | None = None,
) -> Any:
    """A transcribed clip's cross-attention, tokens × time over ``frames`` (the speech span),
    drawn in the browser for any layer and head by the explorer. The page stores the clip where
    the block route reads it (``server.api.Traces.get_clip``) under ``clip``; the browser fetches
    one layer (every head) at a time from there, as the text models' blocks (the opening layer
    comes with the page when small: ``OPENING_BYTES``), and a clip no longer held is said in the
    view. ``config`` is the model's (``cross_header``); ``mel_mf``
    (optional, [bins, frames of the span], e.g. ``pool_mel``) draws the sound above, on the same
    time axis. After the visitor switches the head or clicks a cell, the browser reports {layer,
    head, token} (``st.session_state[key]["view"]``), debounced, and ``on_change`` runs before
    the rerun."""
    data = cross_data(heard, config, frames, view, clip, named, caption, mel_mf)
    return _renderer()(data=data, key=key, on_view_change=on_change)
