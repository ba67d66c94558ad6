"""A trace as an .npz file anyone can open with NumPy alone, written one array at a time.

An export is a list of ``Entry``s: each array's key, shape and dtype, known before any of it is
computed (so its size can be said before a click), and how to make it, whole or a layer at a
time. ``write_npz`` streams them into the zip (``numpy.lib.format`` into each member opened for
writing): a 512-token SmolLM2 trace's patterns and scores (283 MB each) are written layer by
layer and never exist whole. ``plan`` can also give a part of the export: everything but the
attention maps ([L, h, t, t] arrays), or the maps of one layer.
"""

from __future__ import annotations

import math
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np
from numpy.typing import NDArray

from attention_core.core.family import (
    NextTokenTrace,
    SentenceTrace,
    Trace,
    pools_sentence,
    predicts_next,
)
from attention_core.core.pooling import held_block
from attention_core.methods.logit_lens import LogitLens, logit_lens
from attention_core.methods.norm_weighted import norm_weighted_hqk
from attention_core.methods.rollout import (
    ROLLOUT_FULL,
    trace_rollout,
    trace_rollout_pooled,
)

# The documented keys (docs/API.md, "Command line"): short names, shape suffixes dropped.
_RENAMES = {
    "scores_lhqk": "scores",
    "pattern_lhqk": "pattern",
    "hidden_ltd": "hidden",
    "delta_ltd": "delta",
    "value_norm_lhk": "value_norm",
}
MAPS = ("scores", "pattern", "norm_weighted")  # the [L, h, t, t] arrays: most of an export
Part = Literal["all", "stream", "layer"]
# Deflate at its fastest: a 256 MB export compresses in a few seconds, not ten or more, and
# float32 activations shrink little at any level (a causal pattern's zeros shrink at all levels).
COMPRESSLEVEL = 1
WRITE_BYTES = 1 << 20  # bytes handed to the zip at once (deflate's output of 16 MB was 3x that)


@dataclass(frozen=True)
class Entry:
    """One array of an export: its key, shape and dtype, and ``blocks()``, the array whole or
    consecutive blocks of it along its first axis (a layer at a time), in order."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    blocks: Callable[[], Iterable[NDArray[Any]]]

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize

    def array(self) -> NDArray[Any]:
        """The whole array (tests, ``trace_arrays``): every block at once."""
        blocks = [np.asarray(b, self.dtype) for b in self.blocks()]
        return np.concatenate([b.reshape(-1) for b in blocks]).reshape(self.shape)


def _whole(name: str, value: Any) -> Entry:
    array = np.asarray(value)
    return Entry(name, array.shape, array.dtype, lambda: (array,))


def _lazy(name: str, shape: tuple[int, ...], make: Callable[[], NDArray[Any]]) -> Entry:
    """A float32 array computed only while it is written."""
    return Entry(name, shape, np.dtype(np.float32), lambda: (make(),))


def _layers(
    name: str, shape: tuple[int, ...], layer: Callable[[int], Any], which: Sequence[int]
) -> Entry:
    """A float32 [L, ...] array of the layers in ``which``, made and written one at a time."""
    return Entry(
        name, (len(which), *shape[1:]), np.dtype(np.float32), lambda: (layer(i) for i in which)
    )


def export_nbytes(entries: Iterable[Entry]) -> int:
    """The bytes of the arrays an export writes, uncompressed (the file is at most a little
    more: its headers; usually less: deflate)."""
    return sum(e.nbytes for e in entries)


def plan(
    trace: Trace, part: Part = "all", layer: int = 0, layers: Sequence[int] | None = None
) -> list[Entry]:
    """The entries of an export of ``trace``: every array (``all``; with ``layers``, the
    attention maps of those layers only, in that order, and a ``layers`` key: a 2,048-token
    SmolLM2 trace's maps are 4.5 GB each), everything but the attention maps (``stream``), or
    the maps of ``layer`` alone with a ``layer`` key (``layer``). Past ROLLOUT_FULL tokens the
    rollout is the pooled one the trace holds, with its ``rollout_block``. Always the tokens,
    ids, offsets, text and settings (the knocked-out heads as
    [n, 2] layer, head rows). A decoder's trace gives pattern and scores (each layer computed
    as it is written), hidden, delta, ffn_out, each position's next-token top 10 and the logit
    lens's top token after every layer (``lens_top_ids`` [L, t])."""
    cfg = trace.config
    n_layers = cfg.n_layers
    which = _which(n_layers, layers) if part == "all" else range(layer, layer + 1)
    maps = _maps(trace, which) if part != "stream" else []
    if layers is not None and part == "all":
        maps.append(_whole("layers", np.asarray(which, np.int64)))
    head: list[Entry] = [
        _whole("tokens", np.asarray(trace.tokens.tokens, dtype=str)),
        _whole("input_ids", trace.tokens.input_ids_t),
        _whole("offsets", trace.tokens.offsets_t2),
        _whole("text", np.asarray(trace.tokens.text, dtype=str)),
        _whole("n_cut", trace.tokens.n_cut),
        _whole("causal", trace.whatif.causal),
        _whole("scale", trace.whatif.scale),
        _whole("temperature", trace.whatif.temperature),
        _whole("knocked", np.asarray(trace.whatif.knocked, np.int64).reshape(-1, 2)),
    ]
    if part == "layer":
        return [*head, _whole("layer", np.int64(layer)), *maps]
    rest = _decoder_rest(trace) if predicts_next(trace) else _encoder_rest(trace)
    return [*head, *maps, *_rollout(trace), *rest]


def _which(n_layers: int, layers: Sequence[int] | None) -> Sequence[int]:
    """The layers whose maps are written: all, or those asked for (each once, in range)."""
    if layers is None:
        return range(n_layers)
    if not layers or len(set(layers)) != len(layers):
        raise ValueError(f"layers must name each layer once, got {list(layers)}")
    if not all(0 <= i < n_layers for i in layers):
        raise ValueError(f"layers must be in 0..{n_layers - 1}, got {list(layers)}")
    return list(layers)


def _rollout(trace: Trace) -> list[Entry]:
    """The rollout, whole (up to ROLLOUT_FULL tokens) or pooled as the trace holds it."""
    n_layers, n = trace.config.n_layers, trace.n_tokens
    if n <= ROLLOUT_FULL:
        return [_lazy("rollout", (n_layers, n, n), lambda: trace_rollout(trace))]
    block = held_block(n)
    side = -(-n // block)
    pooled = _lazy(
        "rollout", (n_layers, side, side), lambda: trace_rollout_pooled(trace).rollout_lqk
    )
    return [pooled, _whole("rollout_block", np.int64(block))]


def _maps(trace: Trace, which: Sequence[int]) -> list[Entry]:
    """Pattern, scores and norm-weighted patterns of the layers in ``which``, a layer at a time
    (a decoder's computed as written: its trace holds a few layers at most)."""
    cfg, n, norms = trace.config, trace.n_tokens, trace.value_norm_lhk
    shape = (cfg.n_layers, cfg.n_heads, n, n)
    pattern, scores = trace.pattern_lhqk, trace.scores_lhqk

    def weighted(i: int) -> NDArray[np.float32]:
        return norm_weighted_hqk(pattern[i], norms[i])

    return [
        _layers("pattern", shape, lambda i: pattern[i], which),
        _layers("scores", shape, lambda i: scores[i], which),
        _layers("norm_weighted", shape, weighted, which),
    ]


def _encoder_rest(trace: Trace) -> list[Entry]:
    """Every array the trace holds, in its fields' order; for an encoder that pools a sentence
    vector, that vector and each head's own update too (both computed when asked: past 256
    tokens the embedding is a pass of its own)."""
    cfg, n = trace.config, trace.n_tokens
    out = [
        _whole(_RENAMES.get(name, name), value)
        for name, value in vars(trace).items()
        if isinstance(value, np.ndarray) and name not in ("pooled_d", "scores_lhqk", "pattern_lhqk")
    ]
    if pools_sentence(trace):
        out.append(_lazy("sentence_embedding", (cfg.d_model,), _sentence(trace)))
        shape = (cfg.n_layers, cfg.n_heads, n, cfg.d_model)
        out.append(_lazy("head_delta_lhtd", shape, _head_delta(trace)))
    return out


def _sentence(trace: SentenceTrace) -> Callable[[], NDArray[np.float32]]:
    return lambda: trace.sentence_embedding_d


def _head_delta(trace: SentenceTrace) -> Callable[[], NDArray[np.float32]]:
    return lambda: trace.head_delta_lhtd


def _decoder_rest(trace: NextTokenTrace) -> list[Entry]:
    cfg, n = trace.config, trace.n_tokens
    lens: Callable[[], _Lens] = cache(lambda: _Lens(logit_lens(trace, k=1)))  # one pass for both
    everyone = range(cfg.n_layers)  # the updates are recomputed a layer at a time
    return [
        _whole("model", np.asarray(cfg.key, dtype=str)),
        _whole("hidden", trace.hidden_ltd),
        _layers("delta", trace.delta_ltd.shape, lambda i: trace.delta_ltd[i], everyone),
        _layers("ffn_out", trace.ffn_out_ltd.shape, lambda i: trace.ffn_out_ltd[i], everyone),
        _whole("next_top_ids", trace.next_top_ids_tk),
        _whole("next_top_probs", trace.next_top_probs_tk),
        _whole("value_norm", trace.value_norm_lhk),
        Entry("lens_top_ids", (cfg.n_layers, n), np.dtype(np.int64), lambda: (lens().top_ids,)),
        _lazy("lens_top_probs", (cfg.n_layers, n), lambda: lens().top_probs),
    ]


class _Lens:
    """The logit lens's top token after every layer, [L, t], and its probability."""

    def __init__(self, lens: LogitLens) -> None:
        self.top_ids = lens.top_ids_lpk[:, :, 0]
        self.top_probs = lens.top_probs_lpk[:, :, 0]


def write_npz(entries: Iterable[Entry], file: str | Path | IO[bytes]) -> None:
    """Write ``entries`` as a deflated .npz, one member at a time and each member a block at a
    time: the memory it takes is one block (and the zip's buffers), whatever the total."""
    with zipfile.ZipFile(file, "w", zipfile.ZIP_DEFLATED, compresslevel=COMPRESSLEVEL) as zf:
        for entry in entries:
            with zf.open(entry.name + ".npy", "w", force_zip64=True) as member:
                _write_member(member, entry)


def _write_member(member: IO[bytes], entry: Entry) -> None:
    header = {
        "descr": np.lib.format.dtype_to_descr(entry.dtype),
        "fortran_order": False,
        "shape": entry.shape,
    }
    np.lib.format.write_array_header_1_0(member, header)
    written = 0
    for block in entry.blocks():
        flat = np.ascontiguousarray(block, dtype=entry.dtype).reshape(-1).view(np.uint8).data
        for start in range(0, len(flat), WRITE_BYTES):  # the compressor's output stays small
            member.write(flat[start : start + WRITE_BYTES])
        written += len(flat)
    if written != entry.nbytes:  # a block of the wrong shape would write a file NumPy rejects
        raise ValueError(f"{entry.name}: wrote {written} bytes for shape {entry.shape}")


def trace_arrays(trace: Trace) -> dict[str, NDArray[Any]]:
    """Every array of the export under its key, whole (tests; a decoder's maps at 512 tokens
    take 850 MB this way: the app and the command line write with ``write_npz``)."""
    return {entry.name: entry.array() for entry in plan(trace)}


def save_npz(trace: Trace, path: str | Path, layers: Sequence[int] | None = None) -> Path:
    """Write the whole trace to a compressed .npz, an array at a time (the attention maps of
    ``layers`` only, when given: ``plan``); returns the path."""
    path = Path(path)
    entries = plan(trace, "all", 0, layers)  # checks the layers before the file is opened
    write_npz(entries, path)
    return path
