"""Cached model and traces. Cached objects are shared by every session: their arrays are made
read-only, so no page can change what another visitor sees."""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import TypeVar

import numpy as np
import streamlit as st

from attention_core import Model, ModelLoadError, Trace, WhatIf, load_model, trace_sentence

# The server-side list of models a visitor may choose: name -> local folder (None = packaged).
# Paths never come from the browser.
MODELS: dict[str, str | None] = {"all-MiniLM-L6-v2": None}
T = TypeVar("T")


@st.cache_resource(show_spinner="Loading the model…")
def get_model(name: str) -> Model:
    """The loaded model; raises ModelLoadError (not cached) when it is missing or broken."""
    if name not in MODELS:
        raise ModelLoadError(f"Unknown model {name!r}; choose one of {', '.join(MODELS)}.")
    model = load_model(MODELS[name])
    for weight in model.weights.values():  # shared by every session: read-only
        weight.flags.writeable = False
    return model


def model_error(name: str) -> str | None:
    """None when the model loads, else the message explaining what is missing and how to fix it."""
    try:
        get_model(name)
    except ModelLoadError as err:
        return str(err)
    return None


def _freeze(obj: T) -> T:
    """Make every array of a dataclass read-only, also inside nested ones (a Trace's Tokens)."""
    for f in fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
        elif is_dataclass(value):
            _freeze(value)
    return obj


# cache_resource, not cache_data: a 512-token trace holds ~250 MB that cache_data would pickle
# and copy on every rerun; read-only arrays give the same protection without the copy.
@st.cache_resource(max_entries=24, show_spinner="Running the model on your sentence…")
def get_trace(model_name: str, text: str, whatif: WhatIf = WhatIf()) -> Trace:
    """The forward pass of ``text``, computed once per (model, text, switches) for all sessions."""
    return _freeze(trace_sentence(get_model(model_name), text, whatif))
