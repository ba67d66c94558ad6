"""The sidebar every page shares: sentence, presets, layer and head, the [CLS]/[SEP] switch.

A leaf: it reads session state and draws; ui.router frames each page around it."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from attention_core.tokens import MAX_CHARS
from ui import safe
from ui.cache import LABELS, MODELS, model_config
from ui.presets import PRESETS

CUSTOM = "(your own sentence)"
VIEW_OWNED = ("layer", "head", "hide_special")  # what a page's explorer may hold instead


def _use_preset(open_view: Callable[[], None]) -> None:
    """A picked example opens on the view that shows its point (``open_view``: its curated head
    and cell, or on another model its most telling head)."""
    choice = st.session_state["preset"]
    if choice == CUSTOM:
        return
    st.session_state["s"] = choice
    open_view()


def _layer_and_head(sb: DeltaGenerator) -> None:
    cfg = model_config(st.session_state["model"])
    if cfg is None:  # the page says why the model is missing
        return
    n_l, n_h = cfg.n_layers, cfg.n_heads
    sb.slider("Layer", 0, n_l - 1, key="layer", help=f"Which of the {n_l} blocks (0 = first).")
    sb.slider(
        "Head", 0, n_h - 1, key="head", help=f"Which of the {n_h} attention heads in that layer."
    )


def _model_picker(sb: DeltaGenerator, open_view: Callable[[], None]) -> None:
    """The model choice; picking another one opens the view that shows the sentence's point."""
    sb.selectbox(
        "Model",
        list(MODELS),
        key="model",
        format_func=LABELS.__getitem__,  # LABELS has every key of MODELS
        on_change=open_view,
        help="MiniLM reads the whole sentence at once (an encoder); SmolLM2 writes text one token "
        "at a time and each token sees only the ones before it (a decoder; its weights are "
        "4-bit quantized, Q4_1, and its numbers are that model's).",
    )


def render(open_view: Callable[[], None], view_in_page: bool = False) -> None:
    """Draw the shared controls (their values land in session state). ``view_in_page``: the
    page's attention explorer holds layer, head and [CLS]/[SEP], so the sidebar only names them
    (a slider there would show a stale value after the explorer's quiet updates). The router
    has set every default before it calls this. ``open_view`` runs when the visitor picks another
    model or an example: it opens the view that shows the sentence's point on that model."""
    sb = st.sidebar
    _model_picker(sb, open_view)
    current = st.session_state["s"]
    st.session_state["preset"] = current if current in PRESETS else CUSTOM
    sb.selectbox(
        "Example sentences",
        [CUSTOM, *PRESETS],
        key="preset",
        on_change=_use_preset,
        args=(open_view,),
    )
    with sb.form("sentence_form", border=False):
        st.text_input(
            "Your sentence",
            key="s",
            max_chars=MAX_CHARS,
            help="Press Enter or Run. Up to 512 tokens are used; longer text is cut.",
        )
        st.form_submit_button("Run", type="primary")
    cfg = model_config(st.session_state["model"])
    specials = cfg is None or cfg.family == "bert"  # a decoder's text has no [CLS]/[SEP]
    if view_in_page:  # the page's explorer holds them, and redraws them without a rerun
        for name in VIEW_OWNED:  # kept as plain state while their widgets are not drawn
            st.session_state[name] = st.session_state[name]
        sb.caption(
            f"Layer, head{' and [CLS]/[SEP]' if specials else ''}: choose them in the view on "
            "this page (← → change the head, ↑ ↓ the layer after a click on it)."
        )
    else:
        _layer_and_head(sb)
        if specials:
            sb.toggle("Hide [CLS] / [SEP]", key="hide_special", help="Hide the two special tokens.")
        else:
            st.session_state["hide_special"] = st.session_state["hide_special"]  # kept
    for warning in st.session_state.get("_url_warnings", []):
        sb.warning(safe.md(warning))  # quotes what the link said: keep it literal
