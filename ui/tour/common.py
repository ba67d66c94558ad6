"""What the tour's steps share: the token selector, chart placement, the engineers' expander."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from numpy.typing import NDArray
from streamlit.delta_generator import DeltaGenerator

from attention_core import Trace, default_token
from ui import safe, show
from ui.presets import MONEY_BANK, RIVER_BANK
from ui.router import Shared
from ui.show import Area
from ui.widgets import token_picker

BANK_A, BANK_B = RIVER_BANK, MONEY_BANK  # the tour's sentences A and B
LAYER_HEAD = ("layer", "head")  # the explorer's controls in the tour: the switches stay off
KEPT = ("learn_token",)  # choices that survive steps without the widget


def view(shared: Shared, trace: Trace) -> tuple[NDArray[np.int64], list[str]]:
    """Positions shown (the sidebar may hide [CLS]/[SEP]) and their tokens."""
    keep = shared.visible(trace)
    return keep, [trace.tokens.tokens[i] for i in keep]


def chart(fig: go.Figure, key: str, caption: str, where: Area = st) -> None:
    show.plot(fig, key, where, caption)


def token(shared: Shared, trace: Trace) -> int:
    """The token whose numbers a step spells out (URL ``learn_token``; −1 = last real word)."""
    keep, tokens = view(shared, trace)[0], trace.tokens.tokens
    return token_picker(
        "Token to follow",
        "learn_token",
        shared.text,
        keep,
        tokens,
        lambda: default_token(tokens, trace.tokens.special_t),
        st.columns([1, 2])[0],
    )


def say(i: int, trace: Trace) -> str:
    """“token 3 “bank”” for Markdown, the token escaped."""
    return f"token {i} {safe.token(trace.tokens.tokens[i])}"


def engineers() -> DeltaGenerator:
    """The closed section for code names and float-precision checks."""
    return st.expander("For engineers", expanded=False, icon=":material/code:")


def keep_choices() -> None:
    """Re-store the tour's widget values, which Streamlit forgets on steps that do not draw
    their widget, so a token or sentence chosen in one step is still there in the next."""
    for key in KEPT:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]
