"""The models and the sentences' traces, kept once per server for every page: each model loaded
once (Whisper too), each trace kept by the trace store (server/trace_store.py), and each
sentence's most telling head. A page family's own computations live in its own cache module
(ui.text.cache, ui.tour.cache, ui.beyond.cache, ui.listen.cache), each a thin st.cache_* wrapper
over one engine call. Cached objects are shared by every session: a trace's arrays are read-only,
so no page can change what another visitor sees; st.cache_data copies the small results it hands
out."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import cast

import streamlit as st
from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx

from attention_core import (
    Model,
    ModelConfig,
    ModelLoadError,
    WhatIf,
    WhisperModel,
    load_config,
    load_model,
    trace_nbytes,
    trace_sentence,
)
from attention_core.core.family import LoadedModel
from attention_core.core.family import Trace as TextTrace
from attention_core.core.progress import Callback, with_progress
from attention_core.methods.telling import TellingHead, telling_head
from attention_core.models import MODELS as PACKAGED
from attention_core.models import tokenize
from attention_core.models.bert.forward import Trace as BertTrace
from attention_core.models.registry import ALL_MODELS
from server.streamlit_private import Run, current_run
from server.trace_store import Superseded
from ui.store import trace_store as trace_store  # handed on: every cache module reaches it here

# The models a visitor may choose: the URL's key (model=smollm2) -> what load_model reads (a
# packaged model's key, or a local path). Paths never come from the browser.
MODELS: dict[str, str | None] = {key: key for key in PACKAGED}
DEFAULT_MODEL = "minilm"
# What the sidebar's picker offers: the text models, then Whisper (its page is Listen).
PICKABLE: tuple[str, ...] = tuple(ALL_MODELS)
LABELS = {key: spec.display_name for key, spec in ALL_MODELS.items()}  # the picker's words
# A text this many tokens long or longer shows a progress bar while its pass runs (SmolLM2 takes
# about a second at 256 tokens on one core; a shorter text's spinner is enough).
PROGRESS_FROM_TOKENS = 256
OPENING_HEAD = (3, 0)  # an alignment head of tiny.en: Spearman ≥ 0.99 on every shipped clip


# One entry per model: worst case 90 MB (MiniLM's float32 weights) + 540 MB (SmolLM2's), mapped from
# the machine's shared weight cache (attention_core/models/shared_weights.py): one copy for every
# replica, each counting its share.
@st.cache_resource(max_entries=len(MODELS), show_spinner="Loading the model…")
def get_model(name: str) -> LoadedModel:
    """The loaded model, of whichever family (read-only arrays: the engine's loaders see to it);
    raises ModelLoadError (not cached) when it is missing or broken."""
    if name not in MODELS:
        raise ModelLoadError(f"Unknown model {name!r}; choose one of {', '.join(MODELS)}.")
    loaded: LoadedModel = load_model(MODELS[name])
    return loaded


# One entry per server-side model: worst case len(MODELS) × ~1 kB (a config's fields).
@st.cache_resource(max_entries=len(MODELS), show_spinner=False)
def _config(name: str) -> ModelConfig:
    return load_config(MODELS[name])


def model_config(name: str = DEFAULT_MODEL) -> ModelConfig | None:
    """The model's config (its JSON only, no weights: cheap), None when it cannot be read. Layer,
    head and token bounds come from here, never typed. Whisper's are its decoder's, read from
    the loaded model (``whisper_config``)."""
    if name == "whisper":
        return whisper_config()
    if name not in MODELS:
        return None
    try:
        return _config(name)
    except ModelLoadError:
        return None


def model_error(name: str) -> str | None:
    """None when the model loads, else the message explaining what is missing and how to fix it."""
    if name == "whisper":
        return whisper_error()
    try:
        get_model(name)
    except ModelLoadError as err:
        return str(err)
    return None


# One entry: the model (75 MB of float16 as about 150 MB of float32, mapped from the shared cache).
@st.cache_resource(max_entries=1, show_spinner="Loading Whisper tiny.en…")
def get_whisper() -> WhisperModel:
    """Whisper tiny.en, loaded once per server."""
    return load_model("whisper")


def whisper_error() -> str | None:
    """Why Whisper cannot be loaded (with the install command), or None when it loads."""
    try:
        get_whisper()
    except ModelLoadError as err:
        return str(err)
    return None


def whisper_config() -> ModelConfig | None:
    """Whisper's config, the common one: its decoder's 4 layers of 6 heads (the layers and heads
    whose cross-attention the page shows), as the sidebar and the URL's bounds read a model;
    None when it cannot load."""
    if whisper_error():
        return None
    return get_whisper().config


def get_trace(
    model_name: str, text: str, whatif: WhatIf = WhatIf(), page: Run | None = None
) -> TextTrace:
    """The forward pass of ``text``, shared and kept within the store's budget; dropped while it
    waits once its session (a script run's, or the explorer route's ``page``) wants another."""
    model = get_model(model_name)  # in the session's thread: the pass may run on the back lane

    def expected() -> int:
        return trace_nbytes(model.config, len(tokenize(model, text)))

    key, plain = (model_name, text, whatif), partial(trace_sentence, model, text, whatif)
    if (run := page or current_run()) is None:  # a test, the CLI: no session
        return trace_store().get(key, plain, expected=expected)
    with _progress_bar(model, key) as report:  # in a page's run: a long text's bar
        compute = with_progress(plain, report) if report else plain
        try:  # wanted() turns False once the session's run must rerun or stop, or the page left
            return trace_store().get(key, compute, *run, expected)
        except Superseded:
            if page is not None:  # the explorer's route answers it (409)
                raise
            st.empty()  # a yield point: Streamlit raises its RerunException/StopException here
            return trace_store().get(key, compute, expected=expected)  # a rerun not preempting


@contextmanager
def _progress_bar(model: LoadedModel, key: tuple[str, str, WhatIf]) -> Iterator[Callback | None]:
    """A progress bar where the script has got to, and the callback that moves it (after each
    layer of the pass), for a text of PROGRESS_FROM_TOKENS or more whose trace is not stored
    yet; None otherwise (and outside a page's run: the explorer's route). The pass may run on
    the store's back lane: the callback then lends that thread this run's context while it
    moves the bar (a Streamlit call from a thread without it draws nothing), and takes it back."""
    ctx = get_script_run_ctx(suppress_warning=True)
    text = key[1]
    if (
        ctx is None
        or len(text.encode()) < PROGRESS_FROM_TOKENS  # every token but [CLS]/[SEP] spans a byte
        or len(tokenize(model, text)) < PROGRESS_FROM_TOKENS
        or trace_store().peek(key) is not None
    ):
        yield None
        return
    holder = st.empty()

    def report(done: int, total: int) -> None:
        thread = threading.current_thread()
        own = get_script_run_ctx(suppress_warning=True) is ctx
        if not own:
            add_script_run_ctx(thread, ctx)
        try:
            holder.progress(done / total, text=f"Reading the text: layer {done} of {total} done")
        finally:
            if not own:
                add_script_run_ctx(thread, None)

    try:
        yield report
    finally:
        holder.empty()


# Worst case 64 × < 1 kB (a few ints and floats).
@st.cache_data(max_entries=64, show_spinner=False)
def get_telling_head(model_name: str, text: str) -> TellingHead | None:
    """The sentence's most telling head (attention_core.methods.telling's rule), once per
    sentence."""
    return telling_head(get_trace(model_name, text))


def as_encoder(model: LoadedModel) -> Model:
    """``model`` as BERT's own type, for the lessons that read BERT's weights (its learned
    positions, its post-norm block, its heads to borrow): the tour runs on MiniLM only
    (``ui.registry``: Learn's models), Build your own head borrows only where the config says an
    encoder's heads can be. Not a family test: the page already chose the model."""
    return cast(Model, model)


def as_encoder_trace(trace: TextTrace) -> BertTrace:
    """A trace as BERT's own type, where ``as_encoder``'s lessons read its fields."""
    return cast(BertTrace, trace)
