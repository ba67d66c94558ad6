"""Weights that every process on the machine shares: float32 arrays computed from a model file
once (SmolLM2's dequantized GGUF), written to a cache file, and memory-mapped read-only by every
process that loads the model, so the page cache holds one copy for all the server's replicas
instead of each replica holding its own (each replica's PSS counts 1/n of those pages).

The cache file is keyed by the source file's size, its mtime and a hash of its first MiB
(its header), and by ``tag`` (the derivation's version): a changed or reinstalled package is
never read stale. It is written under a temporary name and linked into place (atomic: a
process never maps a half-written file; when two replicas build it at once, the first file named
stays and both map it).
The folder is ``$ATTENTION_WEIGHT_CACHE``, else ``$XDG_CACHE_HOME/attention-visualizer/weights``,
else ``~/.cache/attention-visualizer/weights``; ``ATTENTION_WEIGHT_CACHE=off`` turns it off
(``on``: the default folder). When the folder cannot be written (read-only, full disk) the arrays
are kept in this process's own memory, as without a cache, with one log line. The values are the
built arrays' bytes, exactly.

File layout: ``ATTNWC1\\n``, an 8-byte little-endian header length, a JSON header
``{name: [offset, shape]}``, then each float32 array at a 64-byte aligned offset.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import mmap
import os
import struct
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

F32 = NDArray[np.float32]
ENV = "ATTENTION_WEIGHT_CACHE"
_MAGIC = b"ATTNWC1\n"
_ALIGN = 64
_log = logging.getLogger(__name__)


def cache_folder() -> Path | None:
    """Where the cache files live, or None when the cache is off."""
    chosen = os.environ.get(ENV, "")
    if chosen.lower() in ("off", "0", "no", "false"):
        return None
    if chosen and chosen.lower() not in ("on", "1", "yes", "true"):
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "attention-visualizer" / "weights"


def cache_key(source: Path, tag: str) -> str:
    """The source's size, mtime and a hash of its header, with the derivation's ``tag``."""
    stat = source.stat()
    digest = hashlib.sha256(f"{tag}|{stat.st_size}|{stat.st_mtime_ns}|".encode())
    with open(source, "rb") as f:
        digest.update(f.read(2**20))
    return f"{source.stem}-{tag}-{digest.hexdigest()[:20]}.f32"


def _layout(arrays: dict[str, F32]) -> tuple[bytes, dict[str, int]]:
    offsets, pos, table = {}, 0, {}
    for name, array in arrays.items():
        offsets[name] = pos
        table[name] = [pos, list(array.shape)]
        pos = (pos + array.nbytes + _ALIGN - 1) // _ALIGN * _ALIGN
    head = json.dumps(table).encode()
    start = (len(_MAGIC) + 8 + len(head) + _ALIGN - 1) // _ALIGN * _ALIGN
    prefix = _MAGIC + struct.pack("<Q", len(head)) + head
    prefix += b"\0" * (start - len(prefix))
    return prefix, {name: start + off for name, off in offsets.items()}


def _write(path: Path, arrays: dict[str, F32]) -> None:
    """Write ``arrays`` to ``path`` atomically (a temporary file linked into place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    prefix, offsets = _layout(arrays)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(prefix)
            for name, array in arrays.items():
                f.seek(offsets[name])
                f.write(np.ascontiguousarray(array, np.float32).tobytes())
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # every replica reads it (mkstemp makes it private)
        _publish(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _publish(tmp: str, path: Path) -> None:
    """Give the written file its name, unless another process got there first: then its file
    stays, so that every replica maps the same one (replacing it would leave the first
    replica mapping a file that no longer has a name, a second copy in memory)."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    except OSError:  # a file system without hard links
        os.replace(tmp, path)


def _map(path: Path) -> dict[str, F32]:
    """The arrays of a cache file, read-only views of one shared memory map; ValueError when
    the file is not a whole cache file."""
    with open(path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    if mapped[: len(_MAGIC)] != _MAGIC:
        raise ValueError(f"{path} is not a weight cache file")
    (n_head,) = struct.unpack_from("<Q", mapped, len(_MAGIC))
    table = json.loads(bytes(mapped[len(_MAGIC) + 8 : len(_MAGIC) + 8 + n_head]))
    start = (len(_MAGIC) + 8 + n_head + _ALIGN - 1) // _ALIGN * _ALIGN
    out = {}
    for name, (offset, shape) in table.items():
        count = int(np.prod(shape))
        if start + offset + 4 * count > len(mapped):
            raise ValueError(f"{path} is truncated")
        array = np.frombuffer(mapped, np.float32, count, start + offset).reshape(shape)
        out[name] = array  # read-only: a view of a read-only map
    return out


def shared_arrays(source: Path, tag: str, build: Callable[[], dict[str, F32]]) -> dict[str, F32]:
    """The float32 arrays ``build()`` computes from ``source``, mapped from the machine's cache
    file (built and written first when there is none yet); in this process's own memory when
    the cache is off or its folder cannot be written. Every array is read-only."""
    folder = cache_folder()
    if folder is None:
        return _frozen(build())
    path = folder / cache_key(source, tag)
    if path.is_file():
        try:
            return _map(path)
        except (OSError, ValueError) as err:
            _log.warning("weight cache %s unreadable (%s): building it again", path, err)
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
    arrays = build()
    try:
        _write(path, arrays)
        return _map(path)
    except (OSError, ValueError) as err:
        _log.warning("weight cache not written (%s): weights kept in this process's memory", err)
        return _frozen(arrays)


def _frozen(arrays: dict[str, F32]) -> dict[str, F32]:
    for array in arrays.values():
        array.flags.writeable = False
    return arrays
