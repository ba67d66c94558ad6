"""The sidebar every page shares: sentence, presets, layer and head, the [CLS]/[SEP] switch.

A leaf: it reads session state and draws; ui.router frames each page around it."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from attention_core.core.tokens import MAX_CHARS
from ui import safe
from ui.cache import LABELS, PICKABLE, model_config
from ui.presets import PRESETS
from ui.registry import TEXT_MODELS
from ui.state.shared import FRAME, Frame
from ui.text import upload

CUSTOM = "(your own sentence)"
VIEW_OWNED = (Frame.layer, Frame.head, Frame.hide_special)  # what a page's explorer may hold


def _use_preset(open_view: Callable[[], None]) -> None:
    """A picked example opens on the view that shows its point (``open_view``: its curated head
    and cell, or on another model its most telling head)."""
    choice = FRAME.preset
    if choice is None or choice == CUSTOM:
        return
    FRAME.s = choice
    open_view()


def _layer_and_head(sb: DeltaGenerator) -> None:
    cfg = model_config(FRAME.model)
    if cfg is None:  # the page says why the model is missing
        return
    n_l, n_h = cfg.n_layers, cfg.n_heads
    sb.slider(
        "Layer", 0, n_l - 1, key=Frame.layer.key, help=f"Which of the {n_l} blocks (0 = first)."
    )
    sb.slider(
        "Head",
        0,
        n_h - 1,
        key=Frame.head.key,
        help=f"Which of the {n_h} attention heads in that layer.",
    )


def _model_picker(sb: DeltaGenerator, on_pick: Callable[[], None]) -> None:
    """The model choice (``on_pick`` opens the picked model's view, on the page made for it
    when this page cannot show it)."""
    sb.selectbox(
        "Model",
        list(PICKABLE),
        key=Frame.model.key,
        format_func=LABELS.__getitem__,  # LABELS has every key of PICKABLE
        on_change=on_pick,
        help="MiniLM reads the whole sentence at once (an encoder); SmolLM2 writes text one token"
        " at a time and each token sees only itself and the ones before it (a decoder; its weights"
        " are 4-bit quantized, Q4_1, and its numbers are that model's); Whisper tiny.en writes "
        "down speech, its words attending to the audio (an encoder-decoder: cross-attention, on"
        " the Listen page). A page that cannot show the model picked opens the one that does.",
    )


def _sentence(sb: DeltaGenerator, open_view: Callable[[], None]) -> None:
    """The example picker and the sentence box."""
    current = FRAME.s
    FRAME.preset = current if current in PRESETS else CUSTOM
    sb.selectbox(
        "Example sentences",
        [CUSTOM, *PRESETS],
        key=Frame.preset.key,
        on_change=_use_preset,
        args=(open_view,),
    )
    several_lines = "\n" in current  # a one-line box would lose its line ends
    if several_lines:
        FRAME.page_box = True
    sb.toggle(
        "A page of text",
        key=Frame.page_box.key,
        disabled=several_lines,
        help="A bigger box, for paragraphs: paste or type a page, then press Run (or Ctrl+Enter),"
        " or upload a .txt file."
        + (" On while the text has several lines." if several_lines else ""),
    )
    if FRAME.box_drawn != FRAME.page_box:  # the other kind of box: it starts from the text
        FRAME.box_drawn = FRAME.page_box
        Frame.s.keep()
    with sb.form("sentence_form", border=False):
        box = st.text_area if FRAME.page_box else st.text_input
        box(
            "Your text" if FRAME.page_box else "Your sentence",
            key=Frame.s.key,
            max_chars=MAX_CHARS,
            help=f"{'Ctrl+Enter' if FRAME.page_box else 'Enter'} or Run reads it. {_limits()}",
        )
        st.form_submit_button("Run", type="primary")
    if FRAME.page_box:  # a file is a page of text; a sentence's first visit loads no uploader
        upload.uploader(sb)


def _limits() -> str:
    """How much of a text each text model reads, from their configs (never typed), the model
    shown first."""
    names = sorted(TEXT_MODELS, key=lambda name: name != FRAME.model)
    reads = [(cfg.name, cfg.max_tokens) for name in names if (cfg := model_config(name))]
    said = ", ".join(f"{name} {n:,}" for name, n in reads[1:])
    first = f"{reads[0][0]} reads up to {reads[0][1]:,} tokens" if reads else ""
    return (
        f"{first}{', ' + said if said else ''}; a longer text is cut there (the page says where). "
        f"Up to {MAX_CHARS:,} characters."
    )


def render(
    open_view: Callable[[], None], on_pick: Callable[[], None], view_in_page: bool = False
) -> None:
    """Draw the shared controls (their values land in session state). ``view_in_page``: the
    page's attention explorer holds layer, head and [CLS]/[SEP], so the sidebar only names them
    (a slider there would show a stale value after the explorer's quiet updates). The router
    has set every default before it calls this. ``open_view`` runs when the visitor picks an
    example: it opens the view that shows the sentence's point; ``on_pick`` when they pick a
    model. Whisper reads audio, not the sentence: the page holds its input."""
    sb = st.sidebar
    _model_picker(sb, on_pick)
    if FRAME.model == "whisper":
        sb.caption("Whisper listens to audio: choose a clip, record or upload on this page.")
        # Still drawn (tucked away): a widget left undrawn on one page can come back empty on
        # the next when the browser navigates before this run has finished.
        _sentence(sb.expander("The sentence of the text pages"), open_view)
    else:
        _sentence(sb, open_view)
    cfg = model_config(FRAME.model)
    specials = cfg is None or cfg.special_tokens  # a decoder's text has no [CLS]/[SEP]
    if view_in_page:  # the page's explorer holds them, and redraws them without a rerun
        for entry in VIEW_OWNED:  # kept as plain state while their widgets are not drawn
            entry.keep()
        sb.caption(
            f"Layer, head{' and [CLS]/[SEP]' if specials else ''}: choose them in the view on "
            "this page (← → change the head, ↑ ↓ the layer after a click on it)."
        )
    else:
        _layer_and_head(sb)
        if specials:
            hide = "Hide the two special tokens."
            sb.toggle("Hide [CLS] / [SEP]", key=Frame.hide_special.key, help=hide)
        else:
            Frame.hide_special.keep()
    for warning in FRAME.url_warnings:
        sb.warning(safe.md(warning))  # quotes what the link said: keep it literal
