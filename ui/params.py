"""Every setting that lives in the URL: its name, default, parser and owning page.

On a session's first run the URL fills ``st.session_state`` (bad values fall back to the
default with a warning); on every run the current values are written back, so a copied link
reproduces the view, also after a server restart. Widgets use the parameter name as their key.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote_plus

import streamlit as st

from attention_core import DEFAULT_MODEL_NAME, ModelConfig, parse_heads
from attention_core.core.tokens import MAX_CHARS as MAX_CHARS  # the pages and route read it here
from attention_core.core.tokens import valid_unicode
from server.streamlit_private import widget_values_sent
from ui.cache import DEFAULT_MODEL, PICKABLE, model_config
from ui.presets import DEFAULT_PROBES, DEFAULT_SENTENCE, MONEY_BANK, RIVER_BANK, clip_names
from ui.tour import N_STEPS

# A sentence's share of a link, percent-encoded (link_too_long says why it is bounded).
LINK_MAX_BYTES = 6_000


def _bool(raw: str) -> bool:
    if raw in ("1", "true", "True"):
        return True
    if raw in ("0", "false", "False"):
        return False
    raise ValueError("must be 1 or 0")


def _int_in(lo: int, hi: int | Callable[[], int]) -> Callable[[str], int]:
    """Whole numbers in [lo, hi]; ``hi`` may be read when a value is parsed (from the model)."""

    def parse(raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise ValueError("must be a whole number") from None
        top = hi() if callable(hi) else hi
        if not lo <= value <= top:
            raise ValueError(f"must be between {lo} and {top}")
        return value

    return parse


def current_model() -> str:
    """The model this session shows (the URL's ``model``, or the default)."""
    name = st.session_state.get("model", DEFAULT_MODEL)
    return name if name in PICKABLE else DEFAULT_MODEL


def _model(read: Callable[[ModelConfig], int]) -> Callable[[], int]:
    """A bound read from the session's model's config (no bound when it cannot be read: the page
    then says why the model is missing). The URL's ``model`` is read before the bounds."""
    return lambda: read(cfg) if (cfg := model_config(current_model())) else sys.maxsize


def _model_key(raw: str) -> str:
    """A model's key; the name links used before there was a choice still opens MiniLM."""
    if raw == DEFAULT_MODEL_NAME:
        return DEFAULT_MODEL
    return _choice(*PICKABLE)(raw)


def _float_in(lo: float, hi: float) -> Callable[[str], float]:
    def parse(raw: str) -> float:
        try:
            value = float(raw)
        except ValueError:
            raise ValueError("must be a number") from None
        if not lo <= value <= hi:  # also rejects nan
            raise ValueError(f"must be between {lo} and {hi}")
        return value

    return parse


def _text(raw: str) -> str:
    if len(raw) > MAX_CHARS:
        raise ValueError(f"is longer than {MAX_CHARS:,} characters")
    if not valid_unicode(raw):
        raise ValueError("is not valid Unicode")
    return raw.replace("\x00", "")


def _choice(*options: str) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        if raw not in options:
            raise ValueError(f"must be one of {', '.join(options)}")
        return raw

    return parse


@dataclass(frozen=True)
class Param:
    """One URL parameter; ``page`` None means it is shared by every page."""

    default: Any
    parse: Callable[[str], Any]
    page: str | None = None


LAST_LAYER = _model(lambda cfg: cfg.n_layers - 1)
LAST_HEAD = _model(lambda cfg: cfg.n_heads - 1)
N_HEADS = _model(lambda cfg: cfg.n_heads)
D_MODEL = _model(lambda cfg: cfg.d_model)
LAST_TOKEN = _model(lambda cfg: cfg.max_tokens - 1)


def _all_or_layer(raw: str) -> str:
    """ "all", or a layer number as the page's menu writes it ("3", not "03")."""
    if raw == "all":
        return raw
    try:
        ok = str(_int_in(0, LAST_LAYER)(raw)) == raw
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"must be all or a layer number (0 to {LAST_LAYER()})")
    return raw


def _heads(raw: str) -> str:
    """Heads as the CLI's --knock takes them, "3.7,0.1" (layer.head from 0), each one the
    model's; "" for none chosen. Written back sorted, without repeats."""
    if not raw:
        return raw
    heads = parse_heads(raw)
    top_layer, top_head = LAST_LAYER(), LAST_HEAD()
    if any(layer > top_layer or head > top_head for layer, head in heads):
        raise ValueError(f"must be layer.head pairs within 0.0 to {top_layer}.{top_head}")
    return ",".join(f"{layer}.{head}" for layer, head in heads)


PARAMS: dict[str, Param] = {
    # shared (sidebar)
    "s": Param(DEFAULT_SENTENCE, _text),
    "model": Param(DEFAULT_MODEL, _model_key),
    "layer": Param(2, _int_in(0, LAST_LAYER)),
    "head": Param(0, _int_in(0, LAST_HEAD)),
    "hide_special": Param(False, _bool),
    # pattern page
    "causal": Param(False, _bool, "pattern"),
    "scale": Param(True, _bool, "pattern"),
    "temp": Param(1.0, _float_in(0.05, 5.0), "pattern"),
    "transpose": Param(False, _bool, "pattern"),
    "q": Param(0, _int_in(0, LAST_TOKEN), "pattern"),
    "k": Param(0, _int_in(0, LAST_TOKEN), "pattern"),
    # learn page
    "step": Param(1, _int_in(1, N_STEPS), "learn"),  # 1-based, bounded by ui.tour's registry
    "learn_token": Param(-1, _int_in(-1, LAST_TOKEN), "learn"),  # -1: the last real word
    # all_heads page
    "ah_sort": Param(
        "head", _choice("head", "entropy", "special", "previous", "diagonal", "max"), "all_heads"
    ),
    "ah_desc": Param(True, _bool, "all_heads"),
    "ah_layers": Param("all", _all_or_layer, "all_heads"),
    "ah_top": Param(12, _int_in(1, N_HEADS), "all_heads"),
    # values page
    "v_token": Param(-1, _int_in(-1, LAST_TOKEN), "values"),  # -1: the last real word
    # embedding_shift page
    "es_probes": Param(", ".join(DEFAULT_PROBES), _text, "embedding_shift"),  # per preset
    "es_token": Param(-1, _int_in(-1, LAST_TOKEN), "embedding_shift"),  # -1: closest to the probes
    # hide_word page ("" and -1: the page's default for the sentence)
    "hw_word": Param("", _text, "hide_word"),  # the word hidden from every token
    "hw_token": Param(-1, _int_in(-1, LAST_TOKEN), "hide_word"),  # the token watched
    "hw_base": Param("", _text, "hide_word"),  # the word hidden for comparison
    "hw_probes": Param(", ".join(DEFAULT_PROBES), _text, "hide_word"),  # per preset
    # beyond page ("" and -1: the page's default, the sidebar's head and the last word)
    "knock": Param("", _heads, "beyond"),  # the heads knocked out
    "bey_token": Param(-1, _int_in(-1, LAST_TOKEN), "beyond"),  # watched / predicted after
    # listen page
    "lis_clip": Param(clip_names()[0], _choice(*clip_names()), "listen"),  # the example clip
    # build_head page
    "bh_heads": Param(4, _int_in(1, 12), "build_head"),
    "bh_dk": Param(16, _int_in(1, D_MODEL), "build_head"),
    "bh_source": Param("random", _choice("random", "similarity", "pretrained"), "build_head"),
    "bh_seed": Param(0, _int_in(0, 9999), "build_head"),
    "bh_scale": Param(True, _bool, "build_head"),
    "bh_causal": Param(False, _bool, "build_head"),
    "bh_pos": Param(False, _bool, "build_head"),
    "bh_temp": Param(1.0, _float_in(0.05, 5.0), "build_head"),
    "bh_combine": Param("sum", _choice("sum", "concat"), "build_head"),
    # compare page
    "cmp_a": Param(RIVER_BANK, _text, "compare"),
    "cmp_b": Param(MONEY_BANK, _text, "compare"),
    "cmp_word": Param("bank", _text, "compare"),
}


def _encode(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def accept(name: str, value: Any) -> Any:
    """A value for ``name`` sent by the browser, checked as a URL value is (ValueError if not)."""
    return PARAMS[name].parse(_encode(value))


def sent_by_browser() -> dict[str, Any]:
    """The settings whose widgets the browser sent values for with this run, parsed. A new
    session's first run has none, except when a page reconnects to another replica (its own
    died): its first action there sends what its sliders and boxes show, which is newer than
    its URL (the move itself is in it). Read from Streamlit's private session state
    (server/streamlit_private.py): empty if that changes."""
    found = {}
    for name, value in widget_values_sent().items():
        if name in PARAMS:
            with contextlib.suppress(ValueError):
                found[name] = PARAMS[name].parse(value)
    return found


def init_from_url() -> None:
    """Once per session: copy valid URL parameters into session state, warn about the rest.
    A value the browser's widget sent with this run is newer than the URL: it is kept."""
    if st.session_state.get("_url_read"):
        return
    st.session_state["_url_read"] = True
    warnings, sent = [], sent_by_browser()
    st.session_state.update(sent)
    order = {name: i for i, name in enumerate(PARAMS)}  # model first: the bounds depend on it
    given = sorted(st.query_params.items(), key=lambda item: order.get(item[0], -1))
    for name, raw in given:
        param = PARAMS.get(name)
        if param is None:
            warnings.append(f"Ignored unknown URL parameter “{name}”.")
            continue
        if name in sent:
            continue
        try:
            st.session_state[name] = param.parse(raw)
        except ValueError as err:
            shown = raw if len(raw) <= 40 else raw[:40] + "…"
            warnings.append(f"Ignored URL parameter {name}={shown!r}: it {err}; using the default.")
    st.session_state["_url_warnings"] = warnings


def defaults(page: str | None = None) -> None:
    """Give every shared parameter (and the page's own) its default unless already set."""
    for name, param in PARAMS.items():
        if param.page in (None, page):
            st.session_state.setdefault(name, param.default)


def link_too_long(text: str) -> str | None:
    """Why ``text`` stays out of the page's link, or None when it fits: servers refuse a
    request line past ~16 KB (uvicorn's and HAProxy's buffers; the app's own guard refuses URLs
    past 8 KB), so a link carrying it would open on an error instead of the page."""
    size = len(quote_plus(text))
    if size <= LINK_MAX_BYTES:
        return None
    return (
        f"This sentence is too long to keep in the page's link ({size / 1000:.0f} kB once "
        f"encoded; a link holds up to {LINK_MAX_BYTES / 1000:.0f} kB of it), so the link "
        "leaves it out: to share this view, share the text itself."
    )


def write_url(page: str | None) -> str | None:
    """Mirror the shared and this page's settings into the URL (defaults left out, except s,
    which is left out when too long for a link). Returns why it was left out, or None."""
    values, notice = {}, None
    for name, param in PARAMS.items():
        if param.page not in (None, page) or name not in st.session_state:
            continue
        value = st.session_state[name]
        if name == "s" and (notice := link_too_long(_encode(value))):
            continue
        if name == "s" or value != param.default:
            values[name] = _encode(value)
    if dict(st.query_params) != values:
        st.query_params.from_dict(values)
    return notice
