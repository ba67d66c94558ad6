"""Cached objects are shared by every session and never change: the trace and the model weights
are read-only, and another session's what-if switches leave the cached trace equal to a fresh
forward pass."""

from __future__ import annotations

import json
from dataclasses import fields

import numpy as np
import pytest

from attention_core import Tokens, attention_steps, trace_sentence
from tests.app.conftest import open_page
from tests.app.test_page_pattern import open_numbers
from ui.cache import DEFAULT_MODEL, get_model, get_trace
from ui.routes import block_bytes

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
    trace = get_trace(DEFAULT_MODEL, SENTENCE)
    found = arrays_of(trace)
    assert {"pattern_lhqk", "scores_lhqk", "hidden_ltd", "tokens.special_t"} <= set(found)
    for name, values in found.items():
        with pytest.raises(ValueError, match="read-only"):
            values.flat[0] = values.flat[0]  # a write, whatever the value
        assert not values.flags.writeable, name


def test_the_cached_model_is_read_only():
    model = get_model(DEFAULT_MODEL)
    for name, weight in model.weights.items():
        assert not weight.flags.writeable, name
    with pytest.raises(ValueError, match="read-only"):
        model.weights["embeddings.word_embeddings.weight"][0, 0] = 0.0


def _pattern_view(at) -> tuple[dict, np.ndarray]:
    """What the pattern page shows: the explorer's data (the browser draws from it and the
    engine's scores) and the pattern as numbers, under the session's switches."""
    [element] = at.get("bidi_component")
    assert element.proto.component_name == "attention_explorer"
    return json.loads(element.proto.json), at.dataframe[0].value.to_numpy()


def test_another_sessions_what_ifs_leave_the_cache_unchanged(model):
    first = open_numbers(open_page("pattern", s=SENTENCE, layer="3", head="5"))
    assert not first.exception
    before, table = _pattern_view(first)
    cached = get_trace(DEFAULT_MODEL, SENTENCE)
    fresh = trace_sentence(model, SENTENCE)
    np.testing.assert_allclose(table, fresh.pattern_lhqk[3, 5], atol=1e-6)

    # A second visitor, same sentence: every switch the pattern page has (the link sets them, as
    # the explorer's reports do in session state), and other pages.
    other = open_numbers(
        open_page("pattern", s=SENTENCE, layer="3", head="5", causal="1", scale="0", temp="0.05")
    )
    assert not other.exception and not other.sidebar.warning
    data, changed = _pattern_view(other)
    view = data["view"]
    assert (view["causal"], view["scale"], view["temp"]) == (True, False, 0.05)
    expected = attention_steps(
        fresh.scores_lhqk[3, 5], fresh.config.d_head, scale=False, temperature=0.05, causal=True
    )
    np.testing.assert_allclose(changed, expected.pattern, atol=1e-6)
    assert changed.shape == table.shape
    assert not np.allclose(changed, table)  # the switches did act
    other.session_state["transpose"] = True
    other.run()
    other.session_state["hide_special"] = True  # the explorer's own toggle reports it so
    other.run()
    assert not other.exception
    view = _pattern_view(other)[0]["view"]
    assert view["transpose"] is True and view["hide_special"] is True
    for page in ("all_heads", "values", "embedding_shift", "build_head"):
        visit = open_page(page, s=SENTENCE, hide_special="1", bh_causal="1", bh_source="pretrained")
        assert not visit.exception, page

    again = get_trace(DEFAULT_MODEL, SENTENCE)
    assert again is cached  # still the one shared object
    assert again.whatif == fresh.whatif and again.tokens.tokens == fresh.tokens.tokens
    for name, values in arrays_of(fresh).items():
        np.testing.assert_array_equal(arrays_of(again)[name], values, err_msg=name)
    for layer in range(fresh.config.n_layers):  # what the explorer's route sends the browser
        np.testing.assert_array_equal(
            np.frombuffer(block_bytes(DEFAULT_MODEL, SENTENCE, layer, "scores"), "<f4"),
            fresh.scores_lhqk[layer].ravel(),
            err_msg=f"scores of layer {layer}",
        )

    first.run()  # the first visitor's view is exactly what it was
    after, table_after = _pattern_view(first)
    assert after == before
    np.testing.assert_array_equal(table_after, table)
