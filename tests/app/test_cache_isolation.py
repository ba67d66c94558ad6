"""Cached objects are shared by every session and never change: the trace and the model weights
are read-only, and another session's what-if switches leave the cached trace equal to a fresh
forward pass."""

from __future__ import annotations

import json
from dataclasses import fields

import numpy as np
import pytest

from attention_core import DEFAULT_MODEL_NAME, Tokens, trace_sentence
from tests.app.conftest import open_page
from tests.figdata import array
from ui.cache import get_model, get_trace

SENTENCE = "Session one reads about the muddy river bank"


def arrays_of(obj) -> dict[str, np.ndarray]:
    """Every array of a Trace, the Tokens' ones included, by field name."""
    out = {}
    for f in fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, np.ndarray):
            out[f.name] = value
        elif isinstance(value, Tokens):
            out |= {f"tokens.{k}": v for k, v in arrays_of(value).items()}
    return out


def test_the_cached_trace_is_read_only():
    trace = get_trace(DEFAULT_MODEL_NAME, SENTENCE)
    found = arrays_of(trace)
    assert {"pattern_lhqk", "scores_lhqk", "hidden_ltd", "tokens.special_t"} <= set(found)
    for name, values in found.items():
        with pytest.raises(ValueError, match="read-only"):
            values.flat[0] = values.flat[0]  # a write, whatever the value
        assert not values.flags.writeable, name


def test_the_cached_model_is_read_only():
    model = get_model(DEFAULT_MODEL_NAME)
    for name, weight in model.weights.items():
        assert not weight.flags.writeable, name
    with pytest.raises(ValueError, match="read-only"):
        model.weights["embeddings.word_embeddings.weight"][0, 0] = 0.0


def _pattern_charts(at) -> dict[str, np.ndarray]:
    return {
        c.proto.id.rsplit("-", 1)[-1]: array(json.loads(c.proto.spec)["data"][0]["z"])
        for c in at.get("plotly_chart")
    }


def test_another_sessions_what_ifs_leave_the_cache_unchanged(model):
    first = open_page("pattern", s=SENTENCE, layer="3", head="5")
    assert not first.exception
    before = _pattern_charts(first)
    cached = get_trace(DEFAULT_MODEL_NAME, SENTENCE)

    # A second visitor, same sentence: every switch the pattern page has, and other pages.
    other = open_page("pattern", s=SENTENCE, layer="3", head="5")
    other.toggle(key="causal").set_value(True).run()
    other.toggle(key="scale").set_value(False).run()
    other.slider(key="temp").set_value(0.05).run()
    changed = _pattern_charts(other)["pattern_pattern"]
    assert changed.shape == before["pattern_pattern"].shape
    assert not np.allclose(changed, before["pattern_pattern"])  # the switches did act
    other.toggle(key="transpose").set_value(True).run()
    other.sidebar.toggle(key="hide_special").set_value(True).run()
    assert not other.exception
    for page in ("all_heads", "values", "embedding_shift", "build_head"):
        visit = open_page(page, s=SENTENCE, hide_special="1", bh_causal="1", bh_source="pretrained")
        assert not visit.exception, page

    again = get_trace(DEFAULT_MODEL_NAME, SENTENCE)
    assert again is cached  # still the one shared object
    fresh = trace_sentence(model, SENTENCE)
    assert again.whatif == fresh.whatif and again.tokens.tokens == fresh.tokens.tokens
    for name, values in arrays_of(fresh).items():
        np.testing.assert_array_equal(arrays_of(again)[name], values, err_msg=name)

    first.run()  # the first visitor's view is exactly what it was
    after = _pattern_charts(first)
    assert after.keys() == before.keys()
    for key, z in before.items():
        np.testing.assert_array_equal(after[key], z, err_msg=key)
