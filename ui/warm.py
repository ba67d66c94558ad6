"""A replica's shared work, done once when it starts, before it answers anyone: the models
loaded, and what every first visit on the default sentence reads (its trace, its opening view,
its heads' roles) on each text model, and Whisper with the example clips heard (``ui.listen.warm``).

app.py calls ``warm()`` while Streamlit imports it, before the server listens: serve.sh counts a
replica ready (and HAProxy sends it visitors) only once it answers, so the first student of a
class waits for none of this. It fills the same caches the pages read (``st.cache_resource``,
``st.cache_data``, the trace store), so a page then finds it there. ``ATTENTION_WARM=0`` turns it
off (a quick start for tests that start many servers); a model that cannot load is left for its
page to explain.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

from attention_core import ModelLoadError
from ui.cache import PICKABLE, get_model, get_trace, model_config
from ui.listen.warm import warm as warm_listen
from ui.presets import DEFAULT_SENTENCE
from ui.registry import TEXT_MODELS
from ui.router import opening_view
from ui.state.text import Decoder
from ui.text.cache import head_names, head_roles
from ui.text.home import bank_contrast
from ui.text.notes.bank import get_bank
from ui.text.notes.delta import get_delta
from ui.text.notes.tables import get_adjectives, get_jane, get_monster

ENV = "ATTENTION_WARM"


def enabled() -> bool:
    """Warm at start unless the environment says ``ATTENTION_WARM=0``."""
    return os.environ.get(ENV, "1").strip() != "0"


def warm_text(name: str, text: str = DEFAULT_SENTENCE) -> None:
    """Model ``name`` loaded; ``text``'s trace, opening view and head roles computed (the
    Pattern page's first view), and what Start here measures on every visit (the two bank
    sentences and their probe words), and the notes' examples (the same on every visit)."""
    get_model(name)
    opening_view(name, text)
    get_trace(name, text)
    head_names(name, text)
    head_roles(name, text)
    bank_contrast(name)
    for example in (get_adjectives, get_jane, get_monster, get_bank):  # the notes' own sentences
        example(name)


def warm() -> float:
    """Everything above, each part's failure logged and skipped; the seconds it took."""
    started = time.monotonic()
    for name in PICKABLE:  # every model's config: the sidebar's bounds, on every page
        model_config(name)
    for name in TEXT_MODELS:
        try:
            warm_text(name)
        except ModelLoadError as err:
            print(f"warm: {name} not warmed: {err}", file=sys.stderr, flush=True)
    with contextlib.suppress(ModelLoadError):  # the notes' plumbing example, on the decoder
        get_delta(Decoder.rule.default)
    warm_listen()  # Whisper, and every example clip heard
    took = time.monotonic() - started
    print(f"warm: the models and the default views ready in {took:.1f} s", file=sys.stderr)
    return took
