"""Download buttons: CSV of a matrix on screen, NPZ of every intermediate. Files are built only
when the button is clicked (a callable ``data``), so reruns never pay for them."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attention_core import Trace
from attention_core.export import trace_arrays


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


def _npz_bytes(trace: Trace) -> bytes:
    buf = io.BytesIO()
    # allow_pickle is numpy's default, named so that numpy's stubs do not read the arrays as it
    np.savez_compressed(buf, allow_pickle=True, **trace_arrays(trace))
    return buf.getvalue()


def npz_button(trace: Trace, key: str) -> None:
    st.download_button(
        "All intermediates (.npz)",
        data=lambda: _npz_bytes(trace),
        file_name="attention_trace.npz",
        mime="application/octet-stream",
        key=key,
        on_click="ignore",
        icon=":material/download:",
        help="Every array of this sentence's forward pass; keys are listed in the README.",
    )
