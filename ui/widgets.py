"""Widgets more than one page draws the same way, and the format functions their menus share.

Streamlit keeps a widget's callback or format function for the session: defined here (or in a
room), never in a page script, it holds this module's globals rather than the page's namespace,
which then dies with its run (tests/app/test_cache_bounds.py checks every page)."""

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


def numbered(names: Sequence[str], first: int = 0, sep: str = ": ") -> Callable[[int], str]:
    """A format function writing option i as "i: name" (``sep`` between; names counted from
    ``first``); it keeps only ``names``, a tuple of strings."""
    kept = tuple(names)

    def label(i: int) -> str:
        return f"{i}{sep}{kept[i - first]}"

    return label
