"""Prepared downloads, served from disk: a page writes a large file (the trace's .npz) into a
temporary file and hands the visitor a link to ``EXPORT_PATH/<id>``; this route streams the
file from disk, once, then deletes it.

Why not Streamlit's download button: it keeps a generated file's bytes in the server's memory
until the visitor's next run and copies them again to send them (a 133 MB file raised a live
server's peak by 610 MB, tests/hostile/test_exports_hostile.py). Streamed from disk, a file costs
the replica a read buffer. The id is 32 random bytes: the link is the visitor's alone, and it
needs no header (a plain link cannot send the page token). Files are bounded in number, bytes on
disk and age; a new one pushes the oldest out.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from server.api import refusal

EXPORT_PATH = "/api/export"
TTL_S = 600.0  # a prepared file waits this long for its download
MAX_FILES = 8  # files waiting at once, on this replica
MAX_DISK = 2 * 2**30  # their bytes on disk together
GONE = "This file was downloaded already or has expired: prepare it again."


@dataclass(frozen=True)
class Prepared:
    """One file waiting for its download."""

    path: Path
    name: str  # the file name the browser saves it under
    size: int  # bytes on disk
    made: float  # time.monotonic() when it was added


class ExportFiles:
    """The files waiting for their download, oldest first; each is served once."""

    def __init__(self, ttl_s: float = TTL_S, max_files: int = MAX_FILES, max_disk: int = MAX_DISK):
        self.ttl_s, self.max_files, self.max_disk = ttl_s, max_files, max_disk
        self._files: OrderedDict[str, Prepared] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._files)

    def add(self, path: Path, name: str, now: float | None = None) -> str:
        """Register ``path`` (this object now owns it: it deletes it when done) and return the
        id of its link; the expired and the oldest files go first to keep within the bounds."""
        file_id = secrets.token_urlsafe(32)
        prepared = Prepared(
            path, name, path.stat().st_size, time.monotonic() if now is None else now
        )
        with self._lock:
            self._files[file_id] = prepared
            gone = self._overflow(prepared.made)
        for old in gone:
            old.path.unlink(missing_ok=True)
        return file_id

    def _overflow(self, now: float) -> list[Prepared]:  # called with self._lock held
        gone = []
        for file_id, prepared in list(self._files.items()):
            over = len(self._files) > self.max_files or self._disk() > self.max_disk
            if not over and now - prepared.made <= self.ttl_s:
                break
            gone.append(self._files.pop(file_id))
        return gone

    def _disk(self) -> int:  # called with self._lock held
        return sum(prepared.size for prepared in self._files.values())

    def take(self, file_id: str, consume: bool = True, now: float | None = None) -> Prepared | None:
        """The file of ``file_id`` when it is still waiting, removed from the list unless
        ``consume`` is False (a HEAD request); None when unknown or expired."""
        now = time.monotonic() if now is None else now
        with self._lock:
            gone = self._overflow(now)
            prepared = self._files.pop(file_id, None) if consume else self._files.get(file_id)
        for old in gone:
            old.path.unlink(missing_ok=True)
        return prepared


EXPORTS = ExportFiles()  # this process's waiting files, shared by every page and the route


def routes(files: ExportFiles = EXPORTS) -> list[Route]:
    """``GET EXPORT_PATH/<id>``: the file, streamed from disk, then deleted; 404 JSON when it is
    not waiting (downloaded already, expired, or never made)."""

    async def export(request: Request) -> Response:
        file_id = request.path_params["file_id"]
        prepared = files.take(file_id, consume=request.method == "GET")
        if prepared is None:
            return refusal(404, GONE)
        done = BackgroundTask(prepared.path.unlink, missing_ok=True)
        return FileResponse(
            prepared.path,
            filename=prepared.name,
            media_type="application/octet-stream",
            # identity: the file is deflated already; gzip would hold and recompress it
            headers={"Cache-Control": "no-store", "Content-Encoding": "identity"},
            background=done if request.method == "GET" else None,
        )

    return [Route(EXPORT_PATH + "/{file_id:str}", export, methods=["GET"])]
