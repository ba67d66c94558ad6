"""What a browser view of a trace needs, packed as plain JSON and raw little-endian float32.

The attention explorer in the browser holds a sentence's raw scores and recomputes every stage a
switch changes (scaling, mask, temperature, softmax) itself, so the server sends each number once:
a small JSON header first (tokens and shapes), then one layer at a time as raw bytes, the first
view's layer before the others. Raw float32 keeps the numbers exactly the engine's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from attention_core.forward import Trace

Part = Literal["scores", "qk"]
PARTS: tuple[Part, ...] = ("scores", "qk")


@dataclass(frozen=True)
class Block:
    """One layer's part of a trace for the browser: which, and its bytes."""

    layer: int
    part: Part
    data: bytes  # little-endian float32, C order, shapes as documented in ``layer_block``


def header(trace: Trace) -> dict[str, Any]:
    """The sentence-level facts a view draws with, as JSON-ready values."""
    cfg = trace.config
    return {
        "tokens": list(trace.tokens.tokens),
        "special": [bool(s) for s in trace.tokens.special_t],
        "n_layers": cfg.n_layers,
        "n_heads": cfg.n_heads,
        "d_head": cfg.d_head,
        "n_tokens": trace.n_tokens,
    }


def _le_f32(array: np.ndarray) -> bytes:
    return np.ascontiguousarray(array, dtype="<f4").tobytes()


def layer_block(trace: Trace, layer: int, part: Part) -> Block:
    """One layer's raw scores Q·Kᵀ ([h, q, k]) or its queries then keys ([h, t, e] twice)."""
    n_layers = trace.config.n_layers
    if not 0 <= layer < n_layers:
        raise ValueError(f"layer {layer} is outside 0..{n_layers - 1}")
    if part == "scores":
        return Block(layer, part, _le_f32(trace.scores_lhqk[layer]))
    if part == "qk":
        return Block(layer, part, _le_f32(trace.q_lhqe[layer]) + _le_f32(trace.k_lhke[layer]))
    raise ValueError(f"part must be one of {', '.join(PARTS)}, got {part!r}")


def block_nbytes(n_tokens: int, n_heads: int, d_head: int, part: Part) -> int:
    """Bytes of one layer's block, without building it (for byte budgets and checks)."""
    per_head = n_tokens * n_tokens if part == "scores" else 2 * n_tokens * d_head
    return 4 * n_heads * per_head
