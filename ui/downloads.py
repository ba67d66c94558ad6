"""Download buttons: CSV of a matrix on screen, NPZ of every intermediate. Files are built only
when the button is clicked (a callable ``data``), so reruns never pay for them.

An NPZ is bounded: its size is said on the button before the click (the arrays' bytes,
uncompressed, from their shapes; the file is deflated, so usually smaller), and past
``NPZ_LIMIT`` the buttons offer parts instead of the whole (everything but the attention maps,
or one layer's maps). A click writes the file in the back lane (``server.lanes``), an array at a
time into a temporary file (``attention_core.export.write_npz``), under a reservation of the
memory budget (``server.budget``), one export at a time per visitor. The button's callable holds
the sentence's key, never its trace: the trace is fetched from the store on click, so a button
on screen does not keep a trace alive that the store has let go.
"""

from __future__ import annotations

import csv
import io
import tempfile
import threading
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attention_core import Trace
from attention_core.export import Entry, Part, export_nbytes, plan, write_npz
from server.budget import Busy, reserved
from server.streamlit_private import current_run
from ui.cache import get_trace, trace_store

# The most one file may hold, uncompressed. Streamlit keeps a generated file's bytes in memory
# until the visitor's next run, and a 1.5 GB replica has ~600 MB for visitors' work beside the
# traces: 256 MB is a 512-token MiniLM trace without its attention maps twice over, and keeps
# two visitors' files within that. A 512-token SmolLM2 trace is 1.1 GB whole: parts then.
NPZ_LIMIT = 256 * 2**20
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


def _file_bytes(entries: list[Entry]) -> bytes:
    with tempfile.TemporaryFile() as file:  # on disk while written: one array in memory
        write_npz(entries, file)
        file.seek(0)
        return file.read()


def export_bytes(model: str, text: str, part: Part, layer: int, session: Hashable) -> bytes:
    """The .npz of ``part`` of the sentence's trace (fetched from the store, computed again if
    it left), written in the back lane under a reservation of the file's bytes and of the
    biggest array made while writing. ``Busy`` when the visitor's other export is running, or
    there is no room, or the part is over ``NPZ_LIMIT``."""
    with one_per_visitor(session):
        entries = plan(get_trace(model, text), part, layer)
        size = export_nbytes(entries)
        if size > NPZ_LIMIT:
            raise Busy(f"This file would be {_mb(size)}, over the {_mb(NPZ_LIMIT)} limit.")
        store = trace_store()
        # the file's bytes three times (read back from disk, kept by Streamlit until the next
        # run, and the copy the HTTP send buffers: a 133 MB file raised a live server's peak
        # by 610 MB), and the biggest array made while writing
        with reserved(store, 3 * size + max(e.nbytes for e in entries)):
            if store.lane is None:
                return _file_bytes(entries)
            return store.lane.run(lambda: _file_bytes(entries))


def _mb(size: int) -> str:
    return f"{size / 2**30:.1f} GB" if size >= 2**30 else f"{max(size / 2**20, 0.1):.1f} MB"


def _on_click(model: str, text: str, part: Part, layer: int) -> Callable[[], bytes]:
    """The button's data: the key of the trace, not the trace (Streamlit runs it on click, in a
    thread of its own, where the session is no longer known: it is taken now)."""
    run = current_run()
    session: Hashable = run[0] if run is not None else "no session"
    return lambda: export_bytes(model, text, part, layer, session)


def _button(label: str, data: Callable[[], bytes], file_name: str, key: str, help: str) -> None:
    st.download_button(
        label,
        data=data,
        file_name=file_name,
        mime="application/octet-stream",
        key=key,
        on_click="ignore",
        icon=":material/download:",
        help=help,
    )


def npz_button(trace: Trace, model: str, text: str, layer: int, key: str) -> None:
    """The whole trace's .npz when it is at most ``NPZ_LIMIT``; else two parts: everything but
    the attention maps, and layer ``layer``'s maps. ``trace`` is read for sizes only."""
    how = " uncompressed (the file is deflated, usually smaller); keys are listed in the README."
    whole = export_nbytes(plan(trace))
    if whole <= NPZ_LIMIT:
        data = _on_click(model, text, "all", 0)
        help = f"Every array of this sentence's forward pass: {_mb(whole)}{how}"
        _button(f"All intermediates (.npz, {_mb(whole)})", data, "attention_trace.npz", key, help)
        return
    stream = export_nbytes(plan(trace, "stream"))
    maps = export_nbytes(plan(trace, "layer", layer))
    note = f"The whole trace is {_mb(whole)}, over the {_mb(NPZ_LIMIT)} one download may be. "
    _button(
        f"Without attention maps (.npz, {_mb(stream)})",
        _on_click(model, text, "stream", 0),
        "attention_trace_stream.npz",
        key,
        note + f"This part: every array but pattern, scores, norm_weighted; {_mb(stream)}{how}",
    )
    _button(
        f"Layer {layer}'s maps (.npz, {_mb(maps)})",
        _on_click(model, text, "layer", layer),
        f"attention_layer{layer}.npz",
        key + "_layer",
        note + f"This part: pattern, scores, norm_weighted of layer {layer}; {_mb(maps)}{how}",
    )
