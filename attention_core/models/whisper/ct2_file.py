"""A small reader of CTranslate2's ``model.bin``: every variable as a NumPy view of the file.

The format (CTranslate2's ``models.cc``, binary versions 2 to 6): uint32 version; the spec's
name as a string (uint16 length, the bytes with a trailing NUL) and a uint32 revision; uint32
count of variables, each a name, uint8 rank, rank × uint32 dims, uint8 dtype, uint32 byte count
and the data; then (version 3 and later) uint32 count of aliases, each an alias name and the
variable it stands for. Integers are little-endian.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attention_core.core.config import ModelLoadError

# CTranslate2's DataType enum, in the order it numbers them (no float8 here).
DTYPES: dict[int, np.dtype[Any]] = {
    0: np.dtype("<f4"),
    1: np.dtype("i1"),
    2: np.dtype("<i2"),
    3: np.dtype("<i4"),
    4: np.dtype("<f2"),
}


class _Cursor:
    """Reads little-endian values from a buffer; running past its end is a ModelLoadError."""

    def __init__(self, buf: bytes | mmap.mmap, path: Path) -> None:
        self.buf, self.pos, self.path = buf, 0, path

    def need(self, n: int) -> int:
        start = self.pos
        if n < 0 or start + n > len(self.buf):
            raise ModelLoadError(
                f"{self.path} ends at byte {len(self.buf)}, inside a record that needs "
                f"{n} bytes from byte {start}: the file is truncated or not a CTranslate2 model"
            )
        self.pos += n
        return start

    def take(self, code: str) -> int:
        start = self.need(struct.calcsize("<" + code))
        return int(struct.unpack_from("<" + code, self.buf, start)[0])

    def string(self) -> str:
        n = self.take("H")
        raw = self.buf[self.need(n) : self.pos]
        try:
            return raw.rstrip(b"\0").decode("utf-8")
        except UnicodeDecodeError as err:
            raise ModelLoadError(f"{self.path}: a variable name is not text ({err})") from err


@dataclass(frozen=True)
class Ct2File:
    """A CTranslate2 model file read whole: its spec, and each variable as stored."""

    path: Path
    version: int  # the binary format's version
    spec: str  # e.g. "WhisperSpec"
    revision: int  # the spec's revision
    variables: dict[str, NDArray[Any]] = field(repr=False)  # aliases included, as views
    aliases: dict[str, str] = field(default_factory=dict)  # alias -> the variable it names

    def get(self, name: str) -> NDArray[Any]:
        """Variable ``name``; ModelLoadError names the file when it lacks it."""
        if name not in self.variables:
            raise ModelLoadError(f"{self.path} lacks the variable {name!r}")
        return self.variables[name]


def _variable(cur: _Cursor) -> tuple[str, NDArray[Any]]:
    name = cur.string()
    rank = cur.take("B")
    shape = tuple(cur.take("I") for _ in range(rank))
    code = cur.take("B")
    if code not in DTYPES:
        raise ModelLoadError(f"{cur.path}: {name!r} has data type {code}, not one this reads")
    n_bytes = cur.take("I")
    dtype = DTYPES[code]
    if n_bytes != int(np.prod(shape, dtype=np.int64)) * dtype.itemsize:
        raise ModelLoadError(f"{cur.path}: {name!r} holds {n_bytes} bytes for shape {shape}")
    start = cur.need(n_bytes)
    return name, np.frombuffer(cur.buf, dtype, n_bytes // dtype.itemsize, start).reshape(shape)


def read_ct2(path: str | Path, mapped: bool = False) -> Ct2File:
    """Read ``path`` whole (75 MB for Whisper tiny.en), or with ``mapped`` map it instead: the
    variables are then views of the mapped file and only the table is read (each record's name,
    shape and type; a variable's bytes when it is used). ModelLoadError when it is missing,
    truncated, of an unknown version or otherwise not a CTranslate2 model."""
    path = Path(path)
    try:
        if mapped:
            with path.open("rb") as file:
                buf: bytes | mmap.mmap = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        else:
            buf = path.read_bytes()
    except (OSError, ValueError) as err:  # mmap's ValueError: an empty file
        raise ModelLoadError(f"Cannot read {path}: {err}") from err
    cur = _Cursor(buf, path)
    version = cur.take("I")
    if not 2 <= version <= 6:
        raise ModelLoadError(f"{path} is not a CTranslate2 model (format version {version})")
    spec, revision = cur.string(), cur.take("I")
    variables = dict(_variable(cur) for _ in range(cur.take("I")))
    aliases: dict[str, str] = {}
    if version >= 3:
        for _ in range(cur.take("I")):
            alias, target = cur.string(), cur.string()
            if target not in variables:
                raise ModelLoadError(f"{path}: alias {alias!r} names no variable {target!r}")
            aliases[alias] = target
            variables[alias] = variables[target]
    if cur.pos != len(buf):
        raise ModelLoadError(f"{path} has {len(buf) - cur.pos} bytes after its last record")
    return Ct2File(path, version, spec, revision, variables, aliases)


def ct2_spec(path: str | Path) -> str | None:
    """The spec a CTranslate2 file names (e.g. "WhisperSpec"), read from its first bytes; None
    when ``path`` is not a readable file of a known format version."""
    try:
        with Path(path).open("rb") as file:
            head = file.read(4 + 2 + 256)
        version, n = struct.unpack_from("<IH", head)
    except (OSError, struct.error):
        return None
    if not 2 <= version <= 6 or len(head) < 6 + n:
        return None
    return head[6 : 6 + n].rstrip(b"\0").decode("utf-8", "replace")
