"""What the tour's steps share: the token selector, chart placement, the engineers' expander."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from numpy.typing import NDArray
from streamlit.delta_generator import DeltaGenerator

from attention_core import default_token
from attention_core.core.family import Trace
from ui import safe, show
from ui.cache import get_trace
from ui.presets import MONEY_BANK, RIVER_BANK
from ui.router import Shared
from ui.show import Area
from ui.state.tour import Tour
from ui.widgets import token_picker

BANK_A, BANK_B = RIVER_BANK, MONEY_BANK  # the tour's sentences A and B
LAYER_HEAD = ("layer", "head")  # the explorer's controls in the tour: the switches stay off
KEPT = (Tour.token,)  # choices that survive steps without the widget
THREE = st.column_config.NumberColumn(format="%.3f")  # numbers for learners: three decimals


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
        Tour.token.key,
        shared.text,
        keep,
        tokens,
        lambda: default_token(tokens, trace.tokens.special_t),
        st.columns([1, 2])[0],
    )


def bank_pair(model: str) -> tuple[Trace, int, Trace, int]:
    """The tour's two sentences, each with the position of its “bank”."""
    a, b = get_trace(model, BANK_A), get_trace(model, BANK_B)
    return a, a.tokens.tokens.index("bank"), b, b.tokens.tokens.index("bank")


def layers(ls: list[int]) -> str:
    """“layer 3”, “layers 3 and 4”, “layers 1, 3 and 4”."""
    names = [str(x) for x in ls]
    if len(names) == 1:
        return f"layer {names[0]}"
    return f"layers {', '.join(names[:-1])} and {names[-1]}"


def say(i: int, trace: Trace) -> str:
    """“token 3 “bank”” for Markdown, the token escaped."""
    return f"token {i} {safe.token(trace.tokens.tokens[i])}"


def engineers() -> DeltaGenerator:
    """The closed section for code names and float-precision checks."""
    return st.expander("For engineers", expanded=False, icon=":material/code:")


def keep_choices() -> None:
    """Re-store the tour's widget values, which Streamlit forgets on steps that do not draw
    their widget, so a token or sentence chosen in one step is still there in the next."""
    for entry in KEPT:
        entry.keep()
