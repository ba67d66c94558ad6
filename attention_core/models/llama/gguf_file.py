"""A small GGUF reader: metadata, tensor table, and Q4_1 / Q8_0 / F16 / F32 dequantized in NumPy.

llama.cpp's own ``gguf.GGUFReader`` takes ~2 s just to open SmolLM2's file here (it builds a
NumPy view per metadata string, ~100,000 of them); this reads the metadata with ``struct`` and
the tensors as NumPy views of one memory map, which is what the 3 s load budget needs.
Format: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md (version 2 and 3).
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

F32 = NDArray[np.float32]

# Metadata value types: struct code for the fixed-size ones; 8 string, 9 array.
_SCALARS = {
    0: "B",
    1: "b",
    2: "H",
    3: "h",
    4: "I",
    5: "i",
    6: "f",
    7: "?",
    10: "Q",
    11: "q",
    12: "d",
}
_STRING, _ARRAY = 8, 9
# ggml tensor types this reader dequantizes: name, bytes per block, weights per block.
GGML_TYPES = {0: ("F32", 4, 1), 1: ("F16", 2, 1), 3: ("Q4_1", 20, 32), 8: ("Q8_0", 34, 32)}


class GgufError(ValueError):
    """The file is not a GGUF this reader understands (truncated, wrong magic, unknown type)."""


@dataclass(frozen=True)
class TensorInfo:
    """Where one tensor lies in the file, and how it is stored."""

    name: str
    shape: tuple[int, ...]  # NumPy order: rows first (GGUF lists the innermost dimension first)
    ggml_type: int  # key of GGML_TYPES
    offset: int  # bytes from the start of the file

    @property
    def type_name(self) -> str:
        return GGML_TYPES[self.ggml_type][0]

    @property
    def nbytes(self) -> int:
        _, block_bytes, block_size = GGML_TYPES[self.ggml_type]
        return int(np.prod(self.shape)) // block_size * block_bytes


class _Cursor:
    """Reads little-endian values from a buffer, checking every read stays inside it."""

    def __init__(self, buf: Any) -> None:
        self.buf, self.pos = buf, 0

    def take(self, code: str) -> Any:
        size = struct.calcsize("<" + code)
        if self.pos + size > len(self.buf):
            raise GgufError(f"file ends at byte {len(self.buf)} inside its header")
        (value,) = struct.unpack_from("<" + code, self.buf, self.pos)
        self.pos += size
        return value

    def string(self, keep: bool = True) -> str:
        n = self.take("Q")
        if self.pos + n > len(self.buf):
            raise GgufError(f"file ends at byte {len(self.buf)} inside a string")
        start, self.pos = self.pos, self.pos + n
        return bytes(self.buf[start : self.pos]).decode("utf-8", "replace") if keep else ""

    def value(self, vtype: int, keep: bool) -> Any:
        if vtype in _SCALARS:
            return self.take(_SCALARS[vtype])
        if vtype == _STRING:
            return self.string(keep)
        if vtype != _ARRAY:
            raise GgufError(f"unknown metadata value type {vtype}")
        etype, count = self.take("I"), self.take("Q")
        if etype in _SCALARS and etype != _STRING:  # a fixed-size array: one NumPy view
            dtype = np.dtype("<" + _SCALARS[etype])
            end = self.pos + count * dtype.itemsize
            if end > len(self.buf):
                raise GgufError(f"file ends at byte {len(self.buf)} inside an array")
            arr = np.frombuffer(self.buf, dtype, count, self.pos) if keep else count
            self.pos = end
            return arr
        items = [self.value(etype, keep) for _ in range(count)]
        return items if keep else count


class GgufFile:
    """One GGUF file: ``metadata`` (arrays of strings only when asked for) and ``tensors``."""

    def __init__(self, path: str | Path, keep_arrays: tuple[str, ...] = ()) -> None:
        self.path = Path(path)
        try:
            with open(self.path, "rb") as f:
                self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as err:  # ValueError: an empty file cannot be mapped
            raise GgufError(f"cannot read {self.path}: {err}") from err
        cur = _Cursor(self._map)
        if len(self._map) < 24 or self._map[:4] != b"GGUF":
            raise GgufError(f"{self.path} is not a GGUF file (no GGUF magic)")
        cur.pos = 4
        version, n_tensors, n_kv = cur.take("I"), cur.take("Q"), cur.take("Q")
        if version not in (2, 3):
            raise GgufError(f"GGUF version {version} is not supported (2 or 3)")
        self.metadata: dict[str, Any] = {}
        for _ in range(n_kv):
            key = cur.string()
            vtype = cur.take("I")
            keep = vtype != _ARRAY or key in keep_arrays or self._small_array(cur)
            self.metadata[key] = cur.value(vtype, keep)
        self.tensors = self._tensor_table(cur, n_tensors)

    @staticmethod
    def _small_array(cur: _Cursor) -> bool:
        """Peek: is the array about to be read fixed-size (cheap to keep as a view)?"""
        etype = struct.unpack_from("<I", cur.buf, cur.pos)[0]
        return bool(etype in _SCALARS)

    def _tensor_table(self, cur: _Cursor, n_tensors: int) -> dict[str, TensorInfo]:
        infos = []
        for _ in range(n_tensors):
            name = cur.string()
            dims = [cur.take("Q") for _ in range(cur.take("I"))]
            ggml_type, offset = cur.take("I"), cur.take("Q")
            if ggml_type not in GGML_TYPES:
                raise GgufError(
                    f"tensor {name} has ggml type {ggml_type}, not one of F32, F16, Q4_1, Q8_0"
                )
            infos.append((name, tuple(reversed(dims)), ggml_type, offset))
        align = int(self.metadata.get("general.alignment", 32))
        start = (cur.pos + align - 1) // align * align
        table = {name: TensorInfo(name, shape, t, start + off) for name, shape, t, off in infos}
        for info in table.values():
            if info.offset + info.nbytes > len(self._map):
                end, size = info.offset + info.nbytes, len(self._map)
                raise GgufError(
                    f"truncated: tensor {info.name} ends at byte {end}, the file at {size}"
                )
        return table

    def raw(self, name: str) -> NDArray[np.uint8]:
        """The stored bytes of tensor ``name``, one row per tensor row (a view of the file)."""
        info = self.tensors[name]
        rows = int(np.prod(info.shape[:-1]))
        return np.frombuffer(self._map, np.uint8, info.nbytes, info.offset).reshape(rows, -1)

    def read(self, name: str, out: F32 | None = None, rows: NDArray[np.intp] | None = None) -> F32:
        """Tensor ``name`` as float32, [rows, columns] (2-D) or its own shape (1-D), written into
        ``out`` when given; ``rows`` reorders the rows first (the q/k un-permutation)."""
        info = self.tensors[name]
        raw = self.raw(name) if rows is None else self.raw(name)[rows]
        shape = info.shape if len(info.shape) < 2 else (raw.shape[0], info.shape[-1])
        dest = np.empty(shape, np.float32) if out is None else out
        dequantize(raw, info.ggml_type, dest.reshape(raw.shape[0], -1))
        return dest


def dequantize(raw: NDArray[np.uint8], ggml_type: int, out: F32) -> F32:
    """Dequantize stored rows ``raw`` [rows, row bytes] into ``out`` [rows, columns] (float32)."""
    if ggml_type == 0:
        out[...] = raw.view(np.float32)
        return out
    if ggml_type == 1:
        out[...] = raw.view(np.float16)
        return out
    n_rows, n_blocks = raw.shape[0], out.shape[1] // 32
    blocks = raw.reshape(n_rows, n_blocks, -1)
    out_rbw = out.reshape(n_rows, n_blocks, 32)
    if ggml_type == 8:  # Q8_0: a float16 scale, then 32 signed bytes; w = d·q
        d = blocks[:, :, :2].copy().view(np.float16).astype(np.float32)
        np.multiply(blocks[:, :, 2:].view(np.int8), d, out=out_rbw)
        return out
    # Q4_1: float16 scale d and minimum m, then 16 bytes; byte j holds weight j in its low
    # nibble and weight j + 16 in its high one; w = d·q + m.
    dm = blocks[:, :, :4].copy().view(np.float16).astype(np.float32)
    qs = blocks[:, :, 4:]
    np.multiply(qs & 0x0F, dm[:, :, :1], out=out_rbw[:, :, :16])
    np.multiply(qs >> 4, dm[:, :, :1], out=out_rbw[:, :, 16:])
    out_rbw += dm[:, :, 1:]
    return out
