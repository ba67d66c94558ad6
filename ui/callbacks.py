"""The functions pages hand to Streamlit (callbacks, format functions), defined here rather than
in the page scripts.

Streamlit runs a page script in a fresh namespace and lets it go after the run, unless the session
keeps a function defined in it (a button's callback, a fragment, a select box's format_func): that
function's globals are the page's namespace, and with it every trace and array the page named
(a slice of a trace keeps the whole trace's array alive). Functions defined in a ui module hold
that module's globals instead, so a page's namespace dies with its run; the test in
tests/app/test_cache_bounds.py checks every page.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence

import streamlit as st

from ui import params, router


def open_head(layer: int, head: int) -> None:
    """Open ``layer``/``head`` on the pattern page (the all-heads page switches on its next run)."""
    router.keep_shared_settings()
    st.session_state["layer"], st.session_state["head"] = layer, head
    st.session_state["_ah_open"] = True


def open_head_from_grid() -> None:
    """Open the head clicked in the all-heads grid (the explorer's "open" trigger)."""
    picked = st.session_state["ah_grid"].get("open") or {}
    layer, head = picked.get("layer"), picked.get("head")
    with contextlib.suppress(ValueError):  # only a drawn head can be clicked; check anyway
        open_head(params.accept("layer", layer), params.accept("head", head))


def move_step(by: int, last: int) -> None:
    """The tour's Previous/Next: ``by`` steps, within 1..``last``."""
    st.session_state["step"] = min(last, max(1, st.session_state["step"] + by))


def layer_choice(value: str) -> str:
    """The all-heads page's layer menu: "all" or a layer number."""
    return "all layers" if value == "all" else f"layer {value}"


def numbered(names: Sequence[str], first: int = 0, sep: str = ": ") -> Callable[[int], str]:
    """A format function writing option i as "i: name" (``sep`` between; names counted from
    ``first``); it keeps only ``names``, a tuple of strings."""
    kept = tuple(names)

    def label(i: int) -> str:
        return f"{i}{sep}{kept[i - first]}"

    return label
