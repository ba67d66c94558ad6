"""What runs around every page: URL parameters in, defaults, the shared sidebar, URL out.

navigation.py calls ``frame`` for the page st.navigation picked. While a ``pages/`` folder exists,
Streamlit runs a page the legacy way (without navigation.py) until some run has called
st.navigation: a fresh server's first deep link such as /pattern, and AppTest runs after a
switch_page. ``shared()`` notices such a run, switches the server to st.navigation
routing and reruns, this time through navigation.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attention_core.core.family import Trace
from attention_core.methods.pack import visible_tokens
from ui import glossary, params, registry, safe, sidebar
from ui.cache import OPENING_HEAD, get_telling_head, get_trace, model_config, model_error
from ui.presets import Preset, curated
from ui.state.shared import FRAME, Frame
from ui.state.text import PATTERN, Pattern

# Pages whose attention explorer holds layer, head and [CLS]/[SEP] (and reports them in a
# fragment rerun): the sidebar names them instead of drawing sliders that would go stale.
EXPLORER_PAGES = frozenset({"pattern", "listen"})
HOME = ("", "home")  # Start here's URL path (what frame gets), and its name
CUT_WORDS = 3  # the words before a cut that say where it is

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
        """Token positions to draw: all of them, or all but [CLS]/[SEP] when hidden (all of
        them again when nothing else is left)."""
        return visible_tokens(trace.tokens.special_t, self.hide_special)


def frame(page: str) -> None:
    """Read the URL (first run only), set defaults, draw the sidebar, write the URL."""
    st.set_page_config(
        page_title="Attention, step by step", page_icon=":material/visibility:", layout="wide"
    )
    params.init_from_url()
    params.defaults(page)
    info = next(p for p in registry.PAGES if p.url_path == page)
    show_page_model(info.models)
    open_on_telling_view()
    follow_sentence(page)
    sidebar.render(open_view, picked_model, view_in_page=page in EXPLORER_PAGES)
    left_out = params.write_url(page)
    if left_out:
        st.sidebar.caption(left_out)


def follow_sentence(page: str) -> None:
    """Before the sidebar draws: a sentence typed on Start here opens on its own view (a preset's
    curated head, else its most telling one), so the sidebar, the URL and the chart name one
    head. Elsewhere a new sentence keeps the visitor's head."""
    seen, last = FRAME.s, FRAME.sentence_seen
    FRAME.sentence_seen = seen  # the model's own changes are show_page_model's
    if page in HOME and last is not None and last != seen:
        open_view()


def picked_model() -> None:
    """The picker's callback: remember the layer and head of the model left, and let
    ``show_page_model`` open the picked one (on the page made for it when this page cannot
    show it)."""
    shown = FRAME.shown_model
    if shown is not None:
        FRAME.views = {**FRAME.views, shown: (FRAME.layer, FRAME.head)}
    FRAME.picked = True


def last_pick() -> str:
    """The model the visitor picked last (the link's, before any pick), shown or not."""
    return (FRAME.picks or (FRAME.model,))[-1]


def show_page_model(models: tuple[str, ...]) -> None:
    """The sidebar, the URL and the page show one model: the visitor's latest pick that the page
    shows, else the page's own (Listen shows Whisper; a text page after Listen the text model
    picked before). Picking a model the page cannot show opens the page made for it; a model
    shown again gets back the layer and head it had."""
    picks = FRAME.picks = FRAME.picks or (FRAME.model,)  # the visitor's picks, latest last
    if FRAME.picked:
        FRAME.picked = False
        FRAME.picks = (*(m for m in picks if m != FRAME.model), FRAME.model)
        if FRAME.model not in models:
            keep_shared_settings()
            st.switch_page(registry.page(registry.MODEL_HOMES[FRAME.model]).path)
        open_view()
        FRAME.shown_model = FRAME.model
        return
    want = next((m for m in reversed(picks) if m in models), models[0])
    shown = FRAME.shown_model if FRAME.shown_model is not None else FRAME.model
    if want != shown:
        FRAME.views = {**FRAME.views, shown: (FRAME.layer, FRAME.head)}
        FRAME.model = want
        if want in FRAME.views:
            FRAME.layer, FRAME.head = FRAME.views[want]
        else:
            open_view()
    FRAME.model = FRAME.shown_model = want


def open_on_telling_view() -> None:
    """Once per session, when the link names no head: open on the sentence's curated (preset)
    or most telling head, and its query → key cell, instead of a fixed layer and head."""
    if FRAME.view_opened:
        return
    FRAME.view_opened = True
    said = set(st.query_params) | set(params.sent_by_browser())
    if {Frame.layer.key, Frame.head.key} & said:
        return  # the link, or the page's own sliders (a page reconnecting), say which head
    if FRAME.model == "whisper":
        FRAME.layer, FRAME.head = OPENING_HEAD
        return
    view = opening_view(FRAME.model, FRAME.s)
    if view is None:
        return
    FRAME.layer, FRAME.head = view.layer, view.head
    if Pattern.q.key not in st.query_params and Pattern.k.key not in st.query_params:
        PATTERN.q, PATTERN.k = view.query, view.key


def open_view() -> None:
    """On a picked model or example: open the sentence's view on that model (a preset's curated
    head, or the most telling one), or keep the layer and head where they still exist. Whisper
    opens on one of its alignment heads (its text is what it heard, not the sidebar's)."""
    name = FRAME.model
    if name == "whisper":
        FRAME.layer, FRAME.head = OPENING_HEAD
        return
    view = opening_view(name, FRAME.s)
    cfg = model_config(name)
    if view is not None:
        FRAME.layer, FRAME.head = view.layer, view.head
        PATTERN.q, PATTERN.k = view.query, view.key
    elif cfg is not None:
        FRAME.layer = min(FRAME.layer, cfg.n_layers - 1)
        FRAME.head = min(FRAME.head, cfg.n_heads - 1)


def use_model(name: str) -> None:
    """A button's callback: show ``name`` from now on, opening the sentence's view on it."""
    picked_model()
    FRAME.model = name


def ensure_framed() -> None:
    """Rerun through navigation.py when this run skipped it (a legacy-routed run)."""
    from streamlit.runtime.pages_manager import PagesManager

    # The flag is server-wide: when several sessions open deep links on a fresh server at once,
    # one of them may switch it off while the others' legacy runs are already under way. Those
    # runs never went through frame(), which reads the URL first thing: rerun them too.
    if PagesManager.uses_pages_directory or not FRAME.url_read:
        PagesManager.uses_pages_directory = False
        st.rerun()  # now through navigation.py, so widgets get the same identity on every run


def keep_shared_settings() -> None:
    """Call before st.switch_page: a page switch drops every widget's state, so the shared
    settings (sentence, layer, head, ...) are assigned again, which makes them survive it."""
    for entry in Frame.urls():
        entry.keep()


def shared() -> Shared:
    """The shared settings; every page calls this first (it also makes sure the run is framed)."""
    ensure_framed()
    glossary.start_run()  # each full run of a page explains each term once (ui.glossary)
    return Shared(FRAME.s, FRAME.model, FRAME.layer, FRAME.head, FRAME.hide_special)


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
    if notice := cut_notice(trace):
        st.warning(notice)
    return trace


def cut_notice(trace: Trace) -> str | None:
    """Where the model stopped reading a text longer than it reads (Markdown, the text's own
    words escaped), or None when it read all of it: "all-MiniLM-L6-v2 reads 512 tokens: the text
    is cut after “…the river” (token 512 of 2,793)"."""
    tokens = trace.tokens
    if not tokens.n_cut:
        return None
    read = tokens.offsets_t2[~tokens.special_t, 1]  # where each piece read ends in the text
    end = int(read.max()) if read.size else 0
    words = tokens.text[:end].split()
    tail = " ".join(words[-CUT_WORDS:])
    total = trace.n_tokens + tokens.n_cut
    return (
        f"{trace.config.name} reads {trace.n_tokens:,} tokens: the text is cut after "
        f"{safe.token(('…' if len(words) > CUT_WORDS else '') + tail)} (token {trace.n_tokens:,} "
        f"of {total:,}), and the last {tokens.n_cut:,} tokens are not read."
    )


@dataclass(frozen=True)
class OpeningView:
    """The head and cell a page opens on. What they show is said from the numbers where it is
    shown (``attention_core.lessons.head_words``), never stored here."""

    layer: int
    head: int
    query: int
    key: int
    preset: Preset | None  # the preset whose view this is (else the telling head's pick)

    @property
    def keys(self) -> tuple[int, ...]:
        """Every key the view names: a preset's may name more than one."""
        return self.preset.keys if self.preset else (self.key,)


def opening_view(model_name: str, text: str) -> OpeningView | None:
    """The view a page opens on for ``text``: a preset's curated view, else its most telling
    head; None when there is nothing to show (no model, no word)."""
    preset = curated(text, model_name)
    if preset:
        return OpeningView(preset.layer, preset.head, preset.token, preset.key, preset)
    if not text.strip() or model_error(model_name):
        return None
    pick = get_telling_head(model_name, text)
    if pick is None:
        return None
    return OpeningView(pick.layer, pick.head, pick.query, pick.key, None)
