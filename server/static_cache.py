"""Streamlit's own page files (its JavaScript, styles and fonts under ``/static/``) answered from
memory: read and gzipped once per replica, then sent whole on every visit.

A first visit asks for ~106 of these files. Streamlit's static handler reads each one from disk
in chunks through a worker thread per chunk, and that cost a replica 180-325 ms of CPU per
arrival, most of what an arrival cost (``python -m bench arrivals``, server/profile.py). The
files are content-hashed and immutable (Streamlit marks them so), so one read is enough; the
gzipped copy also cuts what a class's network carries by about three quarters.

Only GET and HEAD of a regular file inside Streamlit's ``static/static`` folder, of at most
FILE_MAX bytes, while the cache holds under CACHE_MAX; anything else (a page, a missing file, a
path that leaves the folder) goes on to Streamlit unchanged. The guard (server/guard.py) has
already bounded the URL.
"""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from streamlit import file_util
from streamlit.web.server.starlette.starlette_server_config import (
    STATIC_ASSET_CACHE_MAX_AGE_SECONDS,
)

FILE_MAX = 8 * 2**20  # bytes: Streamlit's largest bundle is ~5 MB
CACHE_MAX = 64 * 2**20  # bytes held at most, plain and gzipped copies together
COMPRESSIBLE = (".js", ".css", ".svg", ".json", ".map", ".txt", ".html")


@dataclass(frozen=True)
class Asset:
    """One file as it is sent: its bytes, gzipped bytes (None when gzip does not pay), headers."""

    body: bytes
    gzipped: bytes | None
    etag: str
    media_type: str

    @property
    def nbytes(self) -> int:
        return len(self.body) + len(self.gzipped or b"")


def read_asset(path: Path) -> Asset:
    """``path``'s bytes, gzipped once when its kind compresses and gzip saves a tenth or more."""
    body = path.read_bytes()
    packed = gzip.compress(body, compresslevel=6, mtime=0) if path.suffix in COMPRESSIBLE else b""
    gzipped = packed if packed and len(packed) < 0.9 * len(body) else None
    media = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    if media.startswith("text/") or media in ("application/javascript", "text/javascript"):
        media += "; charset=utf-8"
    return Asset(body, gzipped, '"' + hashlib.sha1(body).hexdigest()[:20] + '"', media)


class StaticCache:
    """ASGI middleware: Streamlit's ``/static/`` files from memory (see the module's doc)."""

    def __init__(self, app: Any, root: Path | None = None) -> None:
        self.app = app
        self.root = (root or Path(file_util.get_static_dir())).resolve()
        self.files = (self.root / "static").resolve()
        self.assets: dict[str, Asset] = {}
        self.held = 0
        self._lock = threading.Lock()

    def lookup(self, url_path: str) -> Asset | None:
        """The asset for ``url_path`` (read on first use), or None when it is not one."""
        if not url_path.startswith("/static/"):
            return None
        if (found := self.assets.get(url_path)) is not None:
            return found
        path = (self.root / url_path.lstrip("/")).resolve()
        if not path.is_relative_to(self.files) or not path.is_file():
            return None
        if path.stat().st_size > FILE_MAX:
            return None
        asset = read_asset(path)
        with self._lock:
            if self.held + asset.nbytes > CACHE_MAX:
                return asset  # sent, not kept
            if url_path not in self.assets:
                self.assets[url_path] = asset
                self.held += asset.nbytes
        return asset

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        asset, path = None, scope.get("path", "")
        if scope.get("type") == "http" and scope.get("method") in ("GET", "HEAD"):
            # A file read the first time (and gzipped) in a worker thread, off the event loop.
            asset = self.assets.get(path) or await run_in_threadpool(self.lookup, path)
        if asset is None:
            await self.app(scope, receive, send)
            return
        await send_asset(asset, scope, send)


async def send_asset(asset: Asset, scope: Any, send: Any) -> None:
    """Answer with ``asset``: 304 when the browser holds this version, gzipped when it takes
    gzip and gzip pays, the body left out for HEAD."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    common = [
        (b"etag", asset.etag.encode()),
        (
            b"cache-control",
            f"public, immutable, max-age={STATIC_ASSET_CACHE_MAX_AGE_SECONDS}".encode(),
        ),
        (b"vary", b"Accept-Encoding"),
    ]
    if asset.etag in headers.get("if-none-match", ""):
        await send({"type": "http.response.start", "status": 304, "headers": common})
        await send({"type": "http.response.body", "body": b""})
        return
    zipped = asset.gzipped is not None and "gzip" in headers.get("accept-encoding", "")
    body = asset.gzipped if zipped and asset.gzipped is not None else asset.body
    out = [*common, (b"content-type", asset.media_type.encode())]
    out += [(b"content-length", str(len(body)).encode())]
    out += [(b"content-encoding", b"gzip")] if zipped else []
    await send({"type": "http.response.start", "status": 200, "headers": out})
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})
