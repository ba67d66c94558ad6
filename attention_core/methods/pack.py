"""What a browser view of a trace needs, packed as plain JSON and raw little-endian float32.

The attention explorer in the browser holds a sentence's raw scores and recomputes every stage a
switch changes (scaling, mask, temperature, softmax) itself, so the server sends each number once:
a small JSON header first (tokens and shapes), then one layer at a time as raw bytes, the first
view's layer before the others. Raw float32 keeps the numbers exactly the engine's.

A transcribed clip (Whisper) is served the same way: ``cross_header`` for the view, then one
layer's cross-attention at a time (part "cross", ``cross_block``): [heads, text tokens, frames].

The header also names every head by its job (``methods.roles``: its badge, "previous-token 0.52"
or "mixed: …"), so the view's heading follows the head the visitor moves to without a round
trip. That reads every layer's patterns once per trace (``trace_roles`` keeps the scores): the
first header of a 512-token sentence took 0.1 s on MiniLM and 0.8 s on SmolLM2, whose 30 layers
are recomputed for it, every later one 0.5-1.5 ms (one BLAS thread, load average 3).
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np
from numpy.typing import NDArray

from attention_core.core.config import ModelConfig
from attention_core.core.family import Trace
from attention_core.core.pieces import show_piece
from attention_core.methods.pack_map import MAP_FROM, MAP_SIDE, TILE, map_mode
from attention_core.methods.roles import RoleScores, name_heads, role_scores
from attention_core.methods.rollout import trace_rollout
from attention_core.models.whisper.generate import writing_rows

Part = Literal[
    "scores", "qk", "thumbs", "thumbs_visible", "norms", "rollout", "cross", "roles", "map", "tile"
]
PARTS: tuple[Part, ...] = ("scores", "qk", "thumbs", "thumbs_visible", "norms", "rollout", "roles")
MAP_PARTS: tuple[Part, ...] = ("map", "tile")  # one head's stage, pooled or a window (pack_map)
AUDIO_PARTS: tuple[Part, ...] = ("cross",)  # the parts of a transcribed clip (``HeardClip``)
MAX_TILE = 48  # a thumbnail is at most this many pixels a side; longer sentences are pooled


@dataclass(frozen=True)
class Block:
    """One layer's part of a trace for the browser: which, and its bytes."""

    layer: int
    part: Part
    data: bytes  # little-endian float32, C order, shapes as documented in ``layer_block``


_HELD: dict[int, RoleScores] = {}  # id(trace) -> its role scores, while the trace lives
_BUSY: dict[int, threading.Lock] = {}  # id(trace) -> held while its scores are computed
_HELD_LOCK = threading.Lock()


def _forget(key: int) -> None:
    with _HELD_LOCK:
        _HELD.pop(key, None)
        _BUSY.pop(key, None)


def trace_roles(trace: Trace) -> RoleScores:
    """``role_scores(trace)``, computed once per trace and held beside it while it lives (by
    its identity: a trace is never changed). Scoring reads every layer's patterns: a decoder
    trace recomputes them, so two sessions asking at once wait for one computation."""
    try:
        weakref.ref(trace)
    except TypeError:  # a trace that takes no weak reference is scored each time
        return role_scores(trace)
    key = id(trace)
    with _HELD_LOCK:
        held = _HELD.get(key)
        if held is not None:
            return held
        busy = _BUSY.get(key)
        if busy is None:
            busy = _BUSY[key] = threading.Lock()
            weakref.finalize(trace, _forget, key)
    with busy:
        with _HELD_LOCK:
            held = _HELD.get(key)
        if held is not None:
            return held
        scores = role_scores(trace)
        with _HELD_LOCK:
            _HELD[key] = scores
    return scores


def head_badges(trace: Trace) -> list[list[str]]:
    """Every head's badge by ``methods.roles.RULE`` ("previous-token 0.52"), [layer][head]."""
    return [[role.badge() for role in row] for row in name_heads(trace_roles(trace))]


def header(trace: Trace) -> dict[str, Any]:
    """The sentence-level facts a view draws with, as JSON-ready values. A sentence explored as
    a map (``pack_map.map_mode``) carries its map's sizes ("map") and no roles: scoring reads
    every layer (~10 s at 2,048 tokens), so the view asks for them (part "roles") once drawn."""
    cfg = trace.config
    facts = {
        "tokens": list(trace.tokens.tokens),
        "special": [bool(s) for s in trace.tokens.special_t],
        # the positions drawn when [CLS]/[SEP] are hidden: the one rule, visible_tokens, here
        "kept_hiding_special": visible_tokens(trace.tokens.special_t, True).tolist(),
        "n_layers": cfg.n_layers,
        "n_heads": cfg.n_heads,
        "d_head": cfg.d_head,
        "n_tokens": trace.n_tokens,
        "n_kv_heads": cfg.n_kv_heads,  # heads share keys and values in groups (GQA) when fewer
        "causal": cfg.causal,  # the model's own mask (a decoder), not a what-if
    }
    if map_mode(trace.n_tokens):
        return facts | {"map": {"from": MAP_FROM, "side": MAP_SIDE, "tile": TILE}}
    return facts | {"roles": head_badges(trace)}  # [layer][head]: each head's job, by the rule


def float32_bytes(array: NDArray[np.floating]) -> bytes:
    """Little-endian float32, C order: what the browser reads as a Float32Array."""
    return np.ascontiguousarray(array, dtype="<f4").tobytes()


def layer_block(trace: Trace, layer: int, part: Part) -> Block:
    """One layer's raw scores Q·Kᵀ ([h, q, k]), its queries then keys ([h, t, e] twice), or its
    heads' patterns pooled to thumbnails ([h, s, s], s ≤ MAX_TILE; "thumbs_visible" without the
    [CLS]/[SEP] rows and columns) for the all-heads grid of a long sentence; or its value
    norms ([h, t], ``norm_weighted``) or its attention rollout ([t, t], ``rollout``); or, as
    "roles", every head's badge as JSON. One head's "map" and "tile": ``pack_map.head_block``."""
    n_layers = trace.config.n_layers
    if not 0 <= layer < n_layers:
        raise ValueError(f"layer {layer} is outside 0..{n_layers - 1}")
    if part == "scores":
        return Block(layer, part, float32_bytes(trace.scores_lhqk[layer]))
    if part == "qk":
        q_k = float32_bytes(trace.q_lhqe[layer]) + float32_bytes(trace.k_lhke[layer])
        return Block(layer, part, q_k)
    if part == "norms":
        return Block(layer, part, float32_bytes(trace.value_norm_lhk[layer]))
    if part == "rollout":
        return Block(layer, part, float32_bytes(trace_rollout(trace)[layer]))
    if part == "roles":  # every layer's badges as UTF-8 JSON, [layer][head] (layer unused)
        return Block(layer, part, json.dumps(head_badges(trace)).encode())
    if part in ("thumbs", "thumbs_visible"):
        keep = visible_tokens(trace.tokens.special_t, part == "thumbs_visible")
        pattern_hqk = trace.pattern_lhqk[layer]
        if keep.size < trace.n_tokens:  # no copy of a layer (151 MB at 2,048 tokens) to keep all
            pattern_hqk = pattern_hqk[:, keep][:, :, keep]  # [h,t,t] -> [h,kept,kept]
        return Block(layer, part, float32_bytes(pool_blocks(pattern_hqk)[0]))
    raise ValueError(f"part must be one of {', '.join(PARTS)}, got {part!r}")


def block_nbytes(n_tokens: int, n_heads: int, d_head: int, part: Part, n_frames: int = 0) -> int:
    """Bytes of one layer's block, without building it (for byte budgets and checks); for the
    thumbnails ``n_tokens`` counts the tokens kept, for "cross" the text tokens over
    ``n_frames`` frames; for "map" and "tile" the most one head's answer holds (the whole
    sentence's map, a full tile: ``pack_map.map_nbytes`` and ``tile_nbytes`` size a window)."""
    if part == "map":
        side = -(-n_tokens // -(-n_tokens // MAP_SIDE))
        return 4 * 2 * side * side
    if part == "tile":
        return 4 * min(n_tokens, TILE) ** 2
    if part == "roles":
        raise ValueError("the roles are JSON: their size is known once they are written")
    if part == "cross":
        return 4 * n_heads * n_tokens * n_frames
    if part in ("thumbs", "thumbs_visible"):
        side = -(-n_tokens // -(-n_tokens // MAX_TILE))
        return 4 * n_heads * side * side
    if part == "norms":
        return 4 * n_heads * n_tokens
    if part == "rollout":
        return 4 * n_tokens * n_tokens
    per_head = n_tokens * n_tokens if part == "scores" else 2 * n_tokens * d_head
    return 4 * n_heads * per_head


def visible_tokens(special_t: NDArray[np.bool_], hide_special: bool) -> NDArray[np.int64]:
    """Positions drawn: all, or all but [CLS]/[SEP] when hidden (unless nothing else is left)."""
    keep = np.flatnonzero(~special_t) if hide_special else np.arange(special_t.size)
    return keep if keep.size else np.arange(special_t.size)


def pool_blocks(
    pattern_lhqk: NDArray[np.floating], max_size: int = MAX_TILE
) -> tuple[NDArray[np.float32], int]:
    """Shrink the last two axes to at most ``max_size`` pixels: f×f blocks of tokens (the last
    block may be smaller), f = ceil(n / max_size). Query rows are averaged and key columns summed,
    so a pixel is the weight a block of queries gives a block of keys, and each thumbnail row
    still sums to 1 like a pattern row (a plain mean would fade every head to near 0 as the
    sentence grows). Returns (thumbs, f)."""
    n = pattern_lhqk.shape[-1]
    if pattern_lhqk.shape[-2] != n or n == 0:
        raise ValueError(f"expected square non-empty patterns, got shape {pattern_lhqk.shape}")
    factor = -(-n // max_size)
    if factor == 1:
        return np.asarray(pattern_lhqk, dtype=np.float32), 1
    starts = np.arange(0, n, factor)
    rows = np.diff(np.append(starts, n)).astype(np.float32)
    summed = np.add.reduceat(np.add.reduceat(pattern_lhqk, starts, axis=-1), starts, axis=-2)
    return (summed / rows[:, None]).astype(np.float32), factor


class HeardClip(Protocol):
    """A transcribed clip as the browser's cross-attention view reads it: the engine's
    ``WhisperTrace``, or what the Listen page keeps of one. Row r of the cross-attention is the
    decoder reading token r to write token r + 1 (``writing_rows``)."""

    @property
    def tokens(self) -> Sequence[str]: ...  # prompt + text tokens, as the vocabulary writes them
    @property
    def token_ids(self) -> tuple[int, ...]: ...
    @property
    def n_prompt(self) -> int: ...  # the prompt's tokens come first
    @property
    def cross_pattern_lhqk(self) -> NDArray[np.float32]: ...  # [l, h, t, all frames]


def _span(heard: HeardClip, frames: tuple[int, int]) -> tuple[int, int]:
    n_frames = heard.cross_pattern_lhqk.shape[-1]
    if not 0 <= frames[0] < frames[1] <= n_frames:
        raise ValueError(f"frames {list(frames)} are not a non-empty range of 0..{n_frames}")
    return frames


def cross_header(heard: HeardClip, config: ModelConfig, frames: tuple[int, int]) -> dict[str, Any]:
    """What a view of ``heard``'s cross-attention over ``frames`` (half-open, 20 ms frames of the
    clip) draws with, as JSON-ready values: the text tokens (the rows: each row is the decoder
    writing that token), the layers and heads, the frames and the first one's place in the
    clip. The same fields as ``header`` where they apply (no token is special: the prompt's
    rows are not sent)."""
    lo, hi = _span(heard, frames)
    rows = writing_rows(heard.n_prompt, len(heard.token_ids))
    tokens = [show_piece(t) for t in heard.tokens[rows[0] + 1 : rows[1] + 1]]
    n_layers, n_heads = heard.cross_pattern_lhqk.shape[:2]
    return {
        "tokens": tokens,
        "special": [False] * len(tokens),
        "kept_hiding_special": list(range(len(tokens))),
        "n_layers": int(n_layers),
        "n_heads": int(n_heads),
        "d_head": config.d_head,
        "n_tokens": len(tokens),
        "n_kv_heads": config.n_kv_heads,
        "causal": config.causal,
        "n_frames": hi - lo,  # the keys: 20 ms frames of the audio
        "first": lo,  # the first frame's place in the clip
    }


def cross_block(heard: HeardClip, layer: int, frames: tuple[int, int]) -> Block:
    """One layer's cross-attention [h, text tokens, frames] over ``frames`` (half-open): row i
    is the decoder writing text token i (``writing_rows``), as ``cross_header`` lists them."""
    n_layers = heard.cross_pattern_lhqk.shape[0]
    if not 0 <= layer < n_layers:
        raise ValueError(f"layer {layer} is outside 0..{n_layers - 1}")
    lo, hi = _span(heard, frames)
    rows = writing_rows(heard.n_prompt, len(heard.token_ids))
    pattern_hqf = heard.cross_pattern_lhqk[layer][:, rows[0] : rows[1], lo:hi]
    return Block(layer, "cross", float32_bytes(pattern_hqf))
