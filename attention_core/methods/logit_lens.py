"""The logit lens (nostalgebraist, 2020): what a decoder would predict if it stopped after each
layer. The residual stream after block l goes through the model's own final norm and output
embedding, as the last layer's does, and the top tokens are read off. The last row is the
model's own prediction; the rows before it show the guess forming layer by layer. Early layers
are read in a space they were never trained to write in, so their guesses are rough by design.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attention_core.core.family import N_TOP, Trace, predicts_next

F32 = NDArray[np.float32]


@dataclass(frozen=True)
class LogitLens:
    """Top-k next tokens read after every layer, at some positions: [layer, position, k]."""

    positions_p: NDArray[np.int64]  # which token positions (the prediction after each)
    top_ids_lpk: NDArray[np.int64]
    top_probs_lpk: F32


def _positions(trace: Trace, positions: Sequence[int] | None) -> NDArray[np.int64]:
    n = trace.n_tokens
    chosen = np.arange(n) if positions is None else np.asarray(list(positions), np.int64)
    if chosen.ndim != 1 or not chosen.size or chosen.min() < 0 or chosen.max() >= n:
        raise ValueError(f"positions must be token positions in 0..{n - 1}, got {positions!r}")
    return chosen


def logit_lens(trace: Trace, positions: Sequence[int] | None = None, k: int = 5) -> LogitLens:
    """The lens at ``positions`` (default every token): each layer's residual after its block,
    final-normed, through the output embedding; float32 softmax, as the model's own (``k`` ≤
    10: ``next_top``'s blocks of rows, so 512 positions never hold 512 × 49,152 logits)."""
    if not predicts_next(trace):
        raise ValueError("the logit lens needs a decoder (a model that predicts the next token)")
    cfg = trace.config
    chosen = _positions(trace, positions)
    if not 1 <= k <= N_TOP:
        raise ValueError(f"k must be in 1..{N_TOP}, got {k}")
    ids = np.empty((cfg.n_layers, chosen.size, k), np.int64)
    probs = np.empty((cfg.n_layers, chosen.size, k), np.float32)
    for layer in range(cfg.n_layers):
        x_pd = trace.hidden_ltd[layer + 1][chosen]
        last = layer == cfg.n_layers - 1  # the last state is already final-normed
        top_ids, top_probs = trace.unembed_top(x_pd, normed=last)
        ids[layer], probs[layer] = top_ids[:, :k], top_probs[:, :k]
    return LogitLens(chosen, ids, probs)
