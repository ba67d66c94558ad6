"""The sidebar every page shares: sentence, presets, layer and head, the [CLS]/[SEP] switch."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attention_core import Trace
from ui import params, safe
from ui.cache import MODELS, get_trace, model_error
from ui.presets import PRESETS, curated

CUSTOM = "(your own sentence)"
VIEW_OWNED = ("layer", "head", "hide_special")  # what a page's explorer may hold instead
NOTHING_READABLE = (
    "The model reads no word in this text: it holds only invisible or control characters. "
    "Type a sentence (or pick an example)."
)


@dataclass(frozen=True)
class Shared:
    """The settings every page reads."""

    text: str
    model: str
    layer: int
    head: int
    hide_special: bool

    def visible(self, trace: Trace) -> NDArray[np.int64]:
        """Token positions to draw: all of them, or all but [CLS]/[SEP] when hidden."""
        keep = ~trace.tokens.special_t if self.hide_special else np.ones(trace.n_tokens, bool)
        return np.flatnonzero(keep)


def _use_preset() -> None:
    """A picked example opens on the view that shows its point (its curated head and cell)."""
    choice = st.session_state["preset"]
    if choice == CUSTOM:
        return
    st.session_state["s"] = choice
    preset = curated(choice)
    if preset:
        st.session_state["layer"], st.session_state["head"] = preset.layer, preset.head
        st.session_state["q"], st.session_state["k"] = preset.token, preset.key


def render(view_in_page: bool = False) -> None:
    """Draw the shared controls (their values land in session state). ``view_in_page``: the
    page's attention explorer holds layer, head and [CLS]/[SEP], so the sidebar only names them
    (a slider there would show a stale value after the explorer's quiet updates)."""
    params.defaults()
    sb = st.sidebar
    sb.selectbox("Model", list(MODELS), key="model", help="Models are chosen from a fixed list.")
    current = st.session_state["s"]
    st.session_state["preset"] = current if current in PRESETS else CUSTOM
    sb.selectbox("Example sentences", [CUSTOM, *PRESETS], key="preset", on_change=_use_preset)
    with sb.form("sentence_form", border=False):
        st.text_input(
            "Your sentence", key="s", max_chars=params.MAX_CHARS,
            help="Press Enter or Run. Up to 512 tokens are used; longer text is cut.",
        )  # fmt: skip
        st.form_submit_button("Run", type="primary")
    if view_in_page:  # the page's explorer holds them, and redraws them without a rerun
        for name in VIEW_OWNED:  # kept as plain state while their widgets are not drawn
            st.session_state[name] = st.session_state[name]
        sb.caption(
            "Layer, head and [CLS]/[SEP]: choose them in the view on this page (← → change "
            "the head, ↑ ↓ the layer after a click on it)."
        )
    else:
        sb.slider("Layer", 0, 5, key="layer", help="Which of the 6 encoder blocks (0 = first).")
        sb.slider("Head", 0, 11, key="head", help="Which of the 12 attention heads in that layer.")
        sb.toggle("Hide [CLS] / [SEP]", key="hide_special", help="Hide the two special tokens.")
    for warning in st.session_state.get("_url_warnings", []):
        sb.warning(safe.md(warning))  # quotes what the link said: keep it literal


def shared() -> Shared:
    """The shared settings; every page calls this first (it also makes sure the run is framed)."""
    from ui import router

    router.ensure_framed()
    return Shared(
        text=st.session_state["s"],
        model=st.session_state["model"],
        layer=st.session_state["layer"],
        head=st.session_state["head"],
        hide_special=st.session_state["hide_special"],
    )


def require_trace(shared: Shared) -> Trace:
    """The trace of the shared sentence, or a clear message and a stopped page."""
    error = model_error(shared.model)
    if error:
        st.error(f"The model could not be loaded. {error}")
        st.stop()
    if not shared.text.strip():
        st.info("Type a sentence in the sidebar (or pick an example) to see its attention.")
        st.stop()
    with st.spinner("Running the model on your sentence…"):
        trace = get_trace(shared.model, shared.text)
    if trace.tokens.special_t.all():
        st.info(NOTHING_READABLE)
        st.stop()
    if trace.tokens.n_cut:
        st.warning(
            f"Your text has {trace.n_tokens + trace.tokens.n_cut} tokens; the model reads at most "
            f"{trace.n_tokens}, so the last {trace.tokens.n_cut} were cut."
        )
    return trace
