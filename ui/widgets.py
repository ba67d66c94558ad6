"""Widgets more than one page draws the same way."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from ui.show import Area


def token_picker(
    label: str,
    key: str,
    text: str,
    keep: NDArray[np.int64],
    tokens: Sequence[str],
    default: Callable[[], int],
    where: Area = st,
    **kwargs: Any,
) -> int:
    """A menu of the tokens on show ("3: bank"), its choice kept in ``st.session_state[key]``
    (a URL setting). It starts at ``default()`` on a new sentence ``text``, or when its choice is
    not among ``keep`` (-1 in a link means the page's default); a default that is not on show
    gives the first token shown."""
    seen = f"_{key}_text"
    stale = st.session_state.get(seen) not in (None, text)
    if stale or st.session_state.get(key, -1) not in keep:
        choice = default()
        st.session_state[key] = choice if choice in keep else int(keep[0])
    st.session_state[seen] = text
    return int(
        where.selectbox(
            label, keep.tolist(), key=key, format_func=lambda i: f"{i}: {tokens[i]}", **kwargs
        )
    )
