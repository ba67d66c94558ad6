"""A trace as a flat dict of arrays, and as an .npz file anyone can open with NumPy alone."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attention_core.forward import Trace

# The documented keys (README, "Export"): short names, shape suffixes dropped.
_RENAMES = {
    "scores_lhqk": "scores",
    "pattern_lhqk": "pattern",
    "hidden_ltd": "hidden",
    "delta_ltd": "delta",
    "sentence_embedding_d": "sentence_embedding",
}


def trace_arrays(trace: Trace) -> dict[str, NDArray[Any]]:
    """Every array of the trace under its export key, plus tokens, ids, offsets and settings."""
    out: dict[str, NDArray[Any]] = {
        "tokens": np.asarray(trace.tokens.tokens, dtype=str),
        "input_ids": trace.tokens.input_ids_t,
        "offsets": trace.tokens.offsets_t2,
        "text": np.asarray(trace.tokens.text, dtype=str),
        "n_cut": np.asarray(trace.tokens.n_cut),
        "causal": np.asarray(trace.whatif.causal),
        "scale": np.asarray(trace.whatif.scale),
        "temperature": np.asarray(trace.whatif.temperature),
    }
    for f in fields(trace):
        value = getattr(trace, f.name)
        if isinstance(value, np.ndarray):
            out[_RENAMES.get(f.name, f.name)] = value
    out["head_delta_lhtd"] = trace.head_delta_lhtd  # computed on demand, not a stored field
    return out


def save_npz(trace: Trace, path: str | Path) -> Path:
    """Write the trace to a compressed .npz; returns the path written."""
    path = Path(path)
    np.savez_compressed(path, **trace_arrays(trace))  # type: ignore[arg-type]  # numpy stub: **kwds
    return path
