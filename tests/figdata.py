"""Read numbers back out of Plotly figure JSON (Plotly 7 writes arrays as base64 typed arrays)."""

from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np

_DTYPES = {
    "f4": np.float32,
    "f8": np.float64,
    "i1": np.int8,
    "i2": np.int16,
    "i4": np.int32,
    "u1": np.uint8,
    "u2": np.uint16,
    "u4": np.uint32,
}


def array(value: Any) -> np.ndarray:
    """A figure field (plain list, nested list with None, or typed-array dict) as a float array."""
    if isinstance(value, dict) and "bdata" in value:
        out = np.frombuffer(base64.b64decode(value["bdata"]), dtype=_DTYPES[value["dtype"]])
        shape = value.get("shape")
        if shape:
            dims = [int(s) for s in str(shape).split(",")] if isinstance(shape, str) else shape
            out = out.reshape(dims)
        return out.astype(np.float64)
    return np.array(value, dtype=np.float64)  # None -> nan


def spec(chart: Any) -> dict:
    """The figure dict of an AppTest plotly_chart element."""
    return json.loads(chart.proto.spec)
