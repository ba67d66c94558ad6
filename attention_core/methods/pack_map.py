"""Map mode: a long sentence's head as a map, pooled to the screen, and windows of it at full
resolution, packed for the browser (``pack.layer_block`` serves them as parts "map" and "tile").

Past ``MAP_FROM`` tokens a layer of raw scores is too big to send (151 MB at 2,048 tokens), so
the browser no longer recomputes the stages itself: the server computes one head's stage under
the view's switches (√d_k, temperature, the what-if mask: ``Settings``) with the engine's own
``steps_under``, and sends either the whole of it (or a window) pooled to at most ``MAP_SIDE``
cells a side, or a window of at most ``TILE`` × ``TILE`` tokens at full resolution. A switch
changes every number of a row (softmax renormalises it), which a pooled row cannot redo, so the
browser asks again when one changes.

Pooling: a cell is a block × block square of tokens, block = ceil(longest side / MAP_SIDE); the
map carries both the mean and the max of each block (a view draws one and its read-out names
both). Cells the mask hides from a query are left out of both; a block with every cell hidden is
-inf (drawn blank). The stages before the mask (scores, scaled) count every cell.
"""

from __future__ import annotations

import sys
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, TypeGuard

import numpy as np
from numpy.typing import NDArray

from attention_core.core.attention import steps_under
from attention_core.core.family import Trace
from attention_core.core.pooling import pool_mean
from attention_core.core.whatif import WhatIf
from attention_core.methods.norm_weighted import norm_weighted_hqk
from attention_core.methods.rollout import trace_rollout_pooled

MAP_FROM = 512  # sentences longer than this are explored as a map (shorter: raw scores)
MAP_SIDE = 512  # a pooled map is at most this many cells a side (a panel is ≤ 640 px)
TILE = 256  # a full-resolution window is at most this many tokens a side (256 KB of float32)
MAP_STAGES = ("scores", "scaled", "masked", "pattern", "weighted", "rollout")
TEMP_RANGE = (0.05, 5.0)  # the temperatures the view's slider offers
HELD_HEADS = 4  # stages of this many (layer, head, stage, settings) kept per trace: 16 MB each

F32 = NDArray[np.float32]


@dataclass(frozen=True)
class Settings:
    """The view's switches a stage is computed under (the browser's own, sent with a request)."""

    scale: bool = True  # divide by √d_k
    temperature: float = 1.0  # divide by this too (TEMP_RANGE)
    causal: bool = False  # the what-if mask (a decoder's own is always on)

    def __post_init__(self) -> None:
        lo, hi = TEMP_RANGE
        if not lo <= self.temperature <= hi:  # also refuses nan
            raise ValueError(f"temperature {self.temperature} is outside {lo}..{hi}")


@dataclass(frozen=True)
class Window:
    """Rows [r0, r1) (queries) × columns [c0, c1) (keys), token positions."""

    r0: int
    r1: int
    c0: int
    c1: int

    def check(self, n_tokens: int, most: int | None = None) -> Window:
        """Itself when inside ``n_tokens`` and not empty (each side ≤ ``most``), else ValueError."""
        inside = 0 <= self.r0 < self.r1 <= n_tokens and 0 <= self.c0 < self.c1 <= n_tokens
        if not inside:
            raise ValueError(f"window {self.as_list()} is not inside 0..{n_tokens} tokens")
        if most is not None and max(self.r1 - self.r0, self.c1 - self.c0) > most:
            raise ValueError(f"window {self.as_list()} is more than {most} tokens a side")
        return self

    def as_list(self) -> list[int]:
        return [self.r0, self.r1, self.c0, self.c1]


def map_mode(n_tokens: int) -> bool:
    """Is a sentence of ``n_tokens`` explored as a map?"""
    return n_tokens > MAP_FROM


def block_of(window: Window) -> int:
    """Tokens a side of one pooled cell for ``window``: ceil(its longest side / MAP_SIDE)."""
    longest = max(window.r1 - window.r0, window.c1 - window.c0)
    return -(-longest // MAP_SIDE)


def map_shape(window: Window) -> tuple[int, int]:
    """Pooled rows and columns of ``window`` (the last block of each may be smaller)."""
    block = block_of(window)
    return -(-(window.r1 - window.r0) // block), -(-(window.c1 - window.c0) // block)


def pool_window(
    values_qk: F32, kept_qk: NDArray[np.bool_] | None, block: int, zero_hidden: bool = False
) -> F32:
    """[2, R, C]: the mean and the max of each block × block square of ``values_qk`` over the
    cells ``kept_qk`` keeps (all when None); -inf where a square keeps none. ``zero_hidden``:
    the values are weights (≥ 0) that are exactly 0 where hidden (the pattern, the weighted
    pattern), which spares two passes. A square holds at most 16² cells (8,192 tokens over 512
    cells): float32 sums lose nothing a view shows."""
    if block == 1:  # each cell its own block: the values, hidden cells -inf
        one = values_qk if kept_qk is None else np.where(kept_qk, values_qk, -np.inf)
        return np.stack([one, one]).astype(np.float32)
    rows, cols = values_qk.shape
    r_at, c_at = np.arange(0, rows, block), np.arange(0, cols, block)

    def pooled(ufunc: np.ufunc, array: NDArray[Any]) -> NDArray[Any]:
        return ufunc.reduceat(ufunc.reduceat(array, c_at, axis=1), r_at, axis=0)

    if kept_qk is None:
        means = pool_mean(values_qk, block)
        return np.stack([means, pooled(np.maximum, values_qk)]).astype(np.float32)
    counts = pooled(np.add, kept_qk.astype(np.int16))
    if zero_hidden:  # weights: a hidden cell is 0 and every kept one ≥ 0, so no mask is needed
        sums, highs = pooled(np.add, values_qk), pooled(np.maximum, values_qk)
        highs[counts == 0] = -np.inf
    else:
        sums = pooled(np.add, np.where(kept_qk, values_qk, np.float32(0)))
        highs = pooled(np.maximum, np.where(kept_qk, values_qk, np.float32(-np.inf)))
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), -np.inf)
    return np.stack([means, highs]).astype(np.float32)


_HELD: dict[int, OrderedDict[tuple[Any, ...], tuple[F32, Any]]] = {}
_HELD_LOCK = threading.Lock()


def _forget(key: int) -> None:
    with _HELD_LOCK:
        _HELD.pop(key, None)


def head_stage(
    trace: Trace, layer: int, head: int, stage: str, settings: Settings
) -> tuple[F32, NDArray[np.bool_] | None]:
    """One head's ``stage`` [t, t] under ``settings`` and the cells its mask keeps (None: the
    stage counts every cell), the last HELD_HEADS kept beside the trace: a zoom's tiles and the
    map of the same head are cut from one computation."""
    cfg = trace.config
    if not (0 <= layer < cfg.n_layers and 0 <= head < cfg.n_heads):
        raise ValueError(f"layer {layer}, head {head} is not one of {cfg.n_layers} × {cfg.n_heads}")
    if stage not in MAP_STAGES:
        raise ValueError(f"stage must be one of {', '.join(MAP_STAGES)}")
    key = (layer, head if stage != "rollout" else 0, stage, settings)
    with _HELD_LOCK:
        held = _HELD.get(id(trace))
        if held is None:
            held = _HELD[id(trace)] = OrderedDict()
            weakref.finalize(trace, _forget, id(trace))
        if key in held:
            held.move_to_end(key)
            return held[key]
    computed = _compute(trace, layer, head, stage, settings)
    with _HELD_LOCK:
        held[key] = computed
        while len(held) > HELD_HEADS:
            held.popitem(last=False)
    return computed


def _compute(
    trace: Trace, layer: int, head: int, stage: str, settings: Settings
) -> tuple[F32, NDArray[np.bool_] | None]:
    if stage == "rollout":  # every head averaged; no switch applies to it
        held = trace_rollout_pooled(trace)
        if held.block > 1:
            raise ValueError(
                f"the rollout of {trace.n_tokens} tokens is kept as means of "
                f"{held.block} × {held.block} blocks only: ask for the whole map"
            )
        return np.asarray(held.rollout_lqk[layer], np.float32), None
    whatif = WhatIf(
        causal=settings.causal or trace.config.causal,
        scale=settings.scale,
        temperature=settings.temperature,
    )
    scores_qk = np.asarray(trace.scores_lhqk[layer, head], np.float32)
    steps = steps_under(whatif, scores_qk, trace.config.d_head)
    if stage in ("scores", "scaled"):
        return np.asarray(getattr(steps, stage), np.float32), None
    kept = None if steps.allowed_qk.all() else steps.allowed_qk
    if stage == "weighted":
        norms_k = np.asarray(trace.value_norm_lhk[layer][head], np.float32)
        weighted = norm_weighted_hqk(steps.pattern[None], norms_k[None])[0]
        return weighted, kept
    return np.asarray(getattr(steps, stage), np.float32), kept


def map_values(
    trace: Trace, layer: int, head: int, stage: str, settings: Settings, window: Window
) -> F32:
    """The pooled map of ``window``: [2, R, C] (``map_shape``), mean then max. A long text's
    rollout is held pooled by the engine (``trace_rollout_pooled``: block means, the same
    block as the whole map's): its whole map is that, and its max is not known (nan)."""
    window.check(trace.n_tokens)
    if stage == "rollout" and window == Window(0, trace.n_tokens, 0, trace.n_tokens):
        held = trace_rollout_pooled(trace)
        if held.block > 1 and held.block == block_of(window):
            means = np.asarray(held.rollout_lqk[layer], np.float32)
            return np.stack([means, np.full_like(means, np.nan)])
    values, kept = head_stage(trace, layer, head, stage, settings)
    rows, cols = slice(window.r0, window.r1), slice(window.c0, window.c1)
    cut = None if kept is None else kept[rows, cols]
    weights = stage in ("pattern", "weighted")  # softmax writes exactly 0 where hidden
    return pool_window(values[rows, cols], cut, block_of(window), weights)


def tile_values(
    trace: Trace, layer: int, head: int, stage: str, settings: Settings, window: Window
) -> F32:
    """``window`` (at most TILE a side) of the head's stage at full resolution: the engine's
    float32, masked cells -inf in the masked stage and 0 in the pattern, as the engine has them."""
    window.check(trace.n_tokens, TILE)
    values, _ = head_stage(trace, layer, head, stage, settings)
    return np.ascontiguousarray(values[window.r0 : window.r1, window.c0 : window.c1])


@dataclass(frozen=True)
class HeadRequest:
    """What a "map" or "tile" request asks for: one head's stage over a window, under settings."""

    part: str  # "map" (pooled, mean and max) or "tile" (full resolution, ≤ TILE a side)
    layer: int
    head: int  # ignored for the rollout (every head averaged)
    stage: str  # one of MAP_STAGES
    settings: Settings
    window: Window


def _whole(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def head_request(fields: dict[str, object]) -> HeadRequest:
    """A "map" or "tile" request's fields (as JSON parsed them) checked one by one before any
    work: ValueError with a plain sentence naming the first bad one. Sizes are checked against
    the sentence in ``head_block`` (the trace knows its length)."""
    part, layer, head, stage = (fields.get(k) for k in ("part", "layer", "head", "stage"))
    if part not in ("map", "tile"):
        raise ValueError('part must be "map" or "tile"')
    if not _whole(layer) or not _whole(head):
        raise ValueError("layer and head must be whole numbers")
    if not isinstance(stage, str) or stage not in MAP_STAGES:
        raise ValueError(f"stage must be one of {', '.join(MAP_STAGES)}")
    switches = fields.get("settings")
    if not isinstance(switches, dict) or set(switches) != {"scale", "temp", "causal"}:
        raise ValueError("settings must be {scale, temp, causal}")
    scale, temp, causal = switches["scale"], switches["temp"], switches["causal"]
    if not (isinstance(scale, bool) and isinstance(causal, bool)):
        raise ValueError("settings' scale and causal must be true or false")
    if isinstance(temp, bool) or not isinstance(temp, int | float):
        raise ValueError("settings' temp must be a number")
    window = fields.get("window")
    if not (isinstance(window, list) and len(window) == 4 and all(map(_whole, window))):
        raise ValueError("window must be four whole numbers [first row, end, first column, end]")
    settings = Settings(scale=scale, temperature=float(temp), causal=causal)
    # Ordered, not empty, a tile ≤ TILE a side: known before the sentence's length is.
    box = Window(*window).check(sys.maxsize, TILE if part == "tile" else None)
    return HeadRequest(part, layer, head, stage, settings, box)


def head_block(trace: Trace, req: HeadRequest) -> bytes:
    """The answer to ``req`` as little-endian float32: the map [2, R, C] or the tile [rows,
    cols]."""
    compute = map_values if req.part == "map" else tile_values
    values = compute(trace, req.layer, req.head, req.stage, req.settings, req.window)
    return np.ascontiguousarray(values, dtype="<f4").tobytes()


def map_nbytes(window: Window) -> int:
    """Bytes of the "map" part of ``window``."""
    rows, cols = map_shape(window)
    return 4 * 2 * rows * cols


def tile_nbytes(window: Window) -> int:
    """Bytes of the "tile" part of ``window``."""
    return 4 * (window.r1 - window.r0) * (window.c1 - window.c0)
