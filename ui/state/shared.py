"""The entries every page shares: the sidebar's settings and what the frame around every page
remembers (``Frame``), the verify buttons' (``Verify``); and the bounds a link's numbers are read
within, from the session's model."""

from __future__ import annotations

import sys
from collections.abc import Callable

from attention_core import DEFAULT_MODEL_NAME, ModelConfig
from ui.cache import DEFAULT_MODEL, PICKABLE, model_config
from ui.presets import DEFAULT_SENTENCE
from ui.state.entry import Entry, State, Url, boolean, choice, int_in, text


def model_key(raw: str) -> str:
    """A model's key; the name links used before there was a choice still opens MiniLM."""
    if raw == DEFAULT_MODEL_NAME:
        return DEFAULT_MODEL
    return choice(*PICKABLE)(raw)


def current_model() -> str:
    """The model this session shows (the URL's ``model``, or the default)."""
    name = FRAME.model
    return name if name in PICKABLE else DEFAULT_MODEL


def _model(read: Callable[[ModelConfig], int]) -> Callable[[], int]:
    """A bound read from the session's model's config (no bound when it cannot be read: the page
    then says why the model is missing). The URL's ``model`` is read before the bounds."""
    return lambda: read(cfg) if (cfg := model_config(current_model())) else sys.maxsize


LAST_LAYER = _model(lambda cfg: cfg.n_layers - 1)
LAST_HEAD = _model(lambda cfg: cfg.n_heads - 1)
N_HEADS = _model(lambda cfg: cfg.n_heads)
D_MODEL = _model(lambda cfg: cfg.d_model)
LAST_TOKEN = _model(lambda cfg: cfg.max_tokens - 1)


# --- what every page shares --------------------------------------------------------------------


class Frame(State):
    """The sidebar's settings, which every page reads (the URL keeps them), and what the frame
    around every page (ui.router, ui.params, ui.sidebar) remembers between runs."""

    s = Url("s", DEFAULT_SENTENCE, text)  # the sentence
    model = Url("model", DEFAULT_MODEL, model_key)
    layer = Url("layer", 2, int_in(0, LAST_LAYER))
    head = Url("head", 0, int_in(0, LAST_HEAD))
    hide_special = Url("hide_special", False, boolean)
    preset: Entry[str | None] = Entry("preset", None)  # the sidebar's example menu
    page_box = Entry("s_page", False)  # the sidebar's box is a text area (a page of text)
    box_drawn = Entry("_s_page_drawn", False)  # page_box when the box was last drawn
    upload: Entry[object] = Entry("s_file", None)  # the sidebar's .txt uploader (its file)
    # what became of the last file uploaded: ("ok" or "error", the words, the text it gave)
    upload_said: Entry[tuple[str, str, str] | None] = Entry("_s_file_said", None)
    # The frame's own bookkeeping
    url_read = Entry("_url_read", False)  # the link was read (a session's first run)
    url_warnings: Entry[tuple[str, ...]] = Entry("_url_warnings", ())  # what the link got wrong
    view_opened = Entry("_view_opened", False)  # the session's opening view was chosen
    sentence_seen: Entry[str | None] = Entry("_sentence_seen", None)  # the sentence last run
    picks: Entry[tuple[str, ...]] = Entry("_picks", ())  # the models picked, latest last
    picked = Entry("_picked", False)  # the picker moved: the next frame opens the pick
    shown_model: Entry[str | None] = Entry("_shown_model", None)  # the model the page shows
    # layer and head left on each model, to return to
    views: Entry[dict[str, tuple[int, int]]] = Entry("_views", {})


FRAME = Frame()


class Verify(State):
    """The verify buttons' (ui.text.verify, ui.listen.verify): the check asked for stays on
    screen until the sentence, model or clip changes."""

    run = Entry("verify_run", False)  # the button
    sentence: Entry[tuple[str, str] | None] = Entry("_verify_for", None)  # (model, text) checked
    clip: Entry[str | None] = Entry("_verify_clip", None)  # the hash of the clip checked


VERIFY = Verify()
