"""Download buttons: CSV of a matrix on screen, NPZ of every intermediate.

A CSV is small: Streamlit's download button builds it on click. An NPZ is bounded: its size is
said on the button before the click (the arrays' bytes, uncompressed, from their shapes; the file
is deflated, so usually smaller), and past ``NPZ_LIMIT`` the page offers parts instead of the
whole (everything but the attention maps, or one layer's maps). "Prepare" writes the file in the
back lane (``server.lanes``), an array at a time into a temporary file
(``attention_core.methods.export.write_npz``), under a reservation of the memory budget
(``server.budget``), one export at a time per visitor; the page then links to it, and
``server.exports`` streams it from disk once and deletes it. Streamlit's own button would keep
the file's bytes in memory until the next run and copy them again to send them. The callback
holds the sentence's key, never its trace: the trace is fetched from the store on click.
"""

from __future__ import annotations

import csv
import io
import tempfile
import threading
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attention_core.core.family import Trace
from attention_core.methods.export import Entry, Part, export_nbytes, plan, write_npz
from server.budget import Busy, reserved
from server.exports import EXPORT_PATH, EXPORTS
from server.streamlit_private import current_run
from ui.cache import get_trace, trace_store

# The most one file may hold, uncompressed: it is written to disk and streamed from there, so
# the bound is the download a class's visitor waits for and the disk the replica gives it
# (server.exports keeps at most 2 GB of waiting files). A 512-token SmolLM2 trace is 0.9 GB
# whole: parts then.
NPZ_LIMIT = 256 * 2**20
# What writing costs beside the biggest array: zlib's buffers and the zip's bookkeeping.
WRITER_BYTES = 16 * 2**20
ONE_AT_A_TIME = "Your other download is still being written. Please wait for it to finish."
_EXPORTING: set[Hashable] = set()  # visitors (session ids) with an export being written
_GUARD = threading.Lock()


def matrix_csv(
    values: NDArray[np.floating], row_labels: Sequence[str], col_labels: Sequence[str]
) -> str:
    """CSV text with a header row of column labels and one labelled row per matrix row."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["", *col_labels])
    for label, row in zip(row_labels, np.asarray(values), strict=True):
        writer.writerow([label, *(f"{v:.7g}" for v in row)])
    return out.getvalue()


def csv_button(
    label: str,
    values: NDArray[np.floating],
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    file_name: str,
    key: str,
) -> None:
    st.download_button(
        label,
        data=lambda: matrix_csv(values, row_labels, col_labels),
        file_name=file_name,
        mime="text/csv",
        key=key,
        on_click="ignore",
        icon=":material/download:",
    )


@contextmanager
def one_per_visitor(session: Hashable) -> Iterator[None]:
    """At most one export at a time per session: ``Busy`` (a plain message) for a second."""
    with _GUARD:
        if session in _EXPORTING:
            raise Busy(ONE_AT_A_TIME)
        _EXPORTING.add(session)
    try:
        yield
    finally:
        with _GUARD:
            _EXPORTING.discard(session)


def _write_file(entries: list[Entry]) -> Path:
    """The entries as an .npz in a temporary file (one array in memory at a time); the file is
    the caller's (``server.exports`` deletes it once served)."""
    with tempfile.NamedTemporaryFile(prefix="attention-", suffix=".npz", delete=False) as file:
        path = Path(file.name)
        try:
            write_npz(entries, file)
        except BaseException:
            path.unlink(missing_ok=True)
            raise
    return path


def export_file(model: str, text: str, part: Part, layer: int, session: Hashable) -> Path:
    """The .npz of ``part`` of the sentence's trace (fetched from the store, computed again if
    it left) written to a temporary file in the back lane, under a reservation of the biggest
    array made while writing. ``Busy`` when the visitor's other export is running, or there is
    no room, or the part is over ``NPZ_LIMIT``."""
    with one_per_visitor(session):
        entries = plan(get_trace(model, text), part, layer)
        size = export_nbytes(entries)
        if size > NPZ_LIMIT:
            raise Busy(f"This file would be {_mb(size)}, over the {_mb(NPZ_LIMIT)} limit.")
        store = trace_store()
        with reserved(store, max(e.nbytes for e in entries) + WRITER_BYTES):
            if store.lane is None:
                return _write_file(entries)
            return store.lane.run(lambda: _write_file(entries))


def _mb(size: int) -> str:
    return f"{size / 2**30:.1f} GB" if size >= 2**30 else f"{max(size / 2**20, 0.1):.1f} MB"


@dataclass(frozen=True)
class Download:
    """One file a page offers: what it holds and what it is called."""

    label: str  # the button's words, its size included
    part: Part
    layer: int
    file_name: str
    help: str


def _prepare(key: str, model: str, text: str, download: Download) -> None:
    """The Prepare button's callback (in the session's script thread): write the file, and
    keep its link's id (or the reason it was refused) for the run that follows."""
    run = current_run()
    session: Hashable = run[0] if run is not None else "no session"
    st.session_state.pop(f"{key}_error", None)
    try:
        path = export_file(model, text, download.part, download.layer, session)
    except Busy as err:
        st.session_state[f"{key}_error"] = str(err)
        return
    file_id = EXPORTS.add(path, download.file_name)
    st.session_state[f"{key}_file"] = (file_id, (model, text, download.part, download.layer))


def _offer(key: str, model: str, text: str, download: Download) -> None:
    """A Prepare button, or the link to the file it made for this very sentence and part."""
    ready = st.session_state.get(f"{key}_file")
    if ready is not None and ready[1] == (model, text, download.part, download.layer):
        st.link_button(
            f"Download {download.file_name}",
            url=f"{EXPORT_PATH.lstrip('/')}/{ready[0]}",  # relative: under any base path
            icon=":material/download:",
            help="Ready: the link works once, for ten minutes.",
        )
    else:
        st.button(
            f"Prepare {download.label}",
            key=key,
            on_click=_prepare,
            args=(key, model, text, download),
            icon=":material/download:",
            help=download.help,
        )
    if error := st.session_state.get(f"{key}_error"):
        st.warning(error)


def npz_button(trace: Trace, model: str, text: str, layer: int, key: str) -> None:
    """The whole trace's .npz when it is at most ``NPZ_LIMIT``; else two parts: everything but
    the attention maps, and layer ``layer``'s maps. ``trace`` is read for sizes only: a click
    writes the file from the trace the store holds (or computes again)."""
    how = " uncompressed (the file is deflated, usually smaller); keys are listed in the README."
    whole = export_nbytes(plan(trace))
    if whole <= NPZ_LIMIT:
        help = f"Every array of this sentence's forward pass: {_mb(whole)}{how}"
        label = f"All intermediates (.npz, {_mb(whole)})"
        _offer(key, model, text, Download(label, "all", 0, "attention_trace.npz", help))
        return
    stream = export_nbytes(plan(trace, "stream"))
    maps = export_nbytes(plan(trace, "layer", layer))
    note = f"The whole trace is {_mb(whole)}, over the {_mb(NPZ_LIMIT)} one download may be. "
    stream_help = f"every array but pattern, scores, norm_weighted; {_mb(stream)}{how}"
    maps_help = f"pattern, scores, norm_weighted of layer {layer}; {_mb(maps)}{how}"
    parts = [
        Download(
            f"Without attention maps (.npz, {_mb(stream)})",
            "stream",
            0,
            "attention_trace_stream.npz",
            note + "This part: " + stream_help,
        ),
        Download(
            f"Layer {layer}'s maps (.npz, {_mb(maps)})",
            "layer",
            layer,
            f"attention_layer{layer}.npz",
            note + "This part: " + maps_help,
        ),
    ]
    for suffix, download in zip(("", "_layer"), parts, strict=True):
        _offer(key + suffix, model, text, download)
