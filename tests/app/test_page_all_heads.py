"""The All heads page: the role map, the grid (drawn by the attention explorer in the browser from
the engine's scores) and the table show the model's own patterns and every head's role scores,
checked against TransformerLens's detector on transformers' attentions (tests/roles_reference);
sorting by a role and filters work, and every way of choosing a head opens it on the pattern
page."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from streamlit.components.v2.bidi_component.main import _make_trigger_id

from attention_core import attention_steps, load_model, trace_sentence
from tests.app.conftest import open_page
from tests.figdata import array, spec
from tests.roles_reference import BROAD, MARGIN, reference_role, reference_scores
from ui.routes import block_bytes

os.environ.setdefault("HF_HUB_OFFLINE", "1")
SENTENCE = "dirty quantum plumbing"  # [CLS] dirty quantum plumbing [SEP]
LONG = " ".join(["the river bank was muddy after the rain"] * 40)  # 322 tokens
# The grid's hover figures and the table's columns: label -> role (methods.roles' keys).
FIGURES = {
    "previous-token": "previous_token",
    "duplicate-token": "duplicate_token",
    "induction": "induction",
    "first-token sink": "first_token",
    "[SEP] sink": "last_token",
    "self": "self",
    "broad": "broad",
}
MAP_ORDER = (  # the role map's colour index (z) per role, as viz.role_map lists them
    "previous_token",
    "duplicate_token",
    "induction",
    "self",
    "first_token",
    "last_token",
    "broad",
    "mixed",
)
SHORT = {
    "previous_token": "prev",
    "duplicate_token": "dup",
    "induction": "ind",
    "self": "self",
    "first_token": "sink",
    "last_token": "[SEP]",
    "broad": "broad",
    "mixed": "mixed",
}


@pytest.fixture(scope="module")
def model():
    return load_model()


def _grid(at) -> dict:
    """The JSON the page hands the explorer's grid (the browser draws the thumbnails from it)."""
    [element] = at.get("bidi_component")
    assert element.proto.component_name == "attention_explorer"
    data = json.loads(element.proto.json)
    assert data["mode"] == "grid"
    return data


def _title(at) -> str:
    return at.title[0].value


def _opened(at) -> tuple[int, int]:
    """The layer and head the pattern page hands its explorer."""
    assert _title(at) == "Attention pattern"
    [element] = at.get("bidi_component")
    view = json.loads(element.proto.json)["view"]
    return view["layer"], view["head"]


def _rows(layers, heads_lh) -> list[dict]:
    return [
        {"layer": int(la), "heads": [int(h) for h in heads]}
        for la, heads in zip(layers, heads_lh, strict=True)
    ]


def test_defaults_draw_every_head_of_every_layer(model):
    at = open_page("all_heads", s=SENTENCE)
    assert not at.exception
    assert _title(at) == "All heads"
    charts = [c.proto.id for c in at.get("plotly_chart")]  # the thumbnails: in the browser
    assert len(charts) == 1 and charts[0].endswith("ah_role_map")
    data = _grid(at)
    trace = trace_sentence(model, SENTENCE)
    assert data["text"] == SENTENCE and data["model"] == "minilm"
    assert data["api"] == "api/attention/block" and data["hide_special"] is False
    assert data["header"]["tokens"] == list(trace.tokens.tokens)
    assert data["header"]["special"] == trace.tokens.special_t.tolist()
    assert (data["header"]["n_layers"], data["header"]["n_heads"]) == (6, 12)
    assert data["header"]["d_head"] == 32 and data["header"]["n_tokens"] == 5
    assert data["rows"] == _rows(range(6), [range(12)] * 6)
    # What a thumbnail is drawn from: the route's layer block, at the trained model's switches.
    scores = np.frombuffer(block_bytes(data["model"], data["text"], 3, "scores"), "<f4")
    pattern = attention_steps(scores.reshape(12, 5, 5), 32).pattern
    np.testing.assert_allclose(pattern[7], trace.pattern_lhqk[3, 7], atol=1e-6)
    ref = reference_scores("minilm", SENTENCE)
    assert list(data["metrics"]) == list(FIGURES)  # the hover figures, [layer][head]
    for label, role in FIGURES.items():
        np.testing.assert_allclose(data["metrics"][label], ref[role], atol=1e-5)
    table = at.dataframe[0].value
    assert len(table) == 72 and table.iloc[29][["layer", "head"]].tolist() == [2, 5]
    assert list(table.columns) == ["layer", "head", "job (by the rule)", *FIGURES]
    for label, role in FIGURES.items():
        np.testing.assert_allclose(table[label], ref[role].ravel(), atol=6e-4)
    jobs = table["job (by the rule)"].tolist()
    for i, (layer, head) in enumerate(table[["layer", "head"]].itertuples(index=False)):
        expected = reference_role("minilm", SENTENCE, layer, head)
        if expected is not None:
            assert jobs[i] == {v: k for k, v in FIGURES.items()}.get(expected[0], "mixed")
    assert any(c.value.startswith("How to read this: each square") for c in at.caption)
    assert at.button(key="ah_open").label == "Open layer 0, head 0 on the pattern page"


def test_sorting_by_a_role_ranks_heads_and_goes_into_the_url():
    at = open_page("all_heads", s=SENTENCE, ah_sort="previous_token")
    assert not at.exception
    prev = reference_scores("minilm", SENTENCE)["previous_token"]
    best = np.unravel_index(np.argmax(prev), prev.shape)
    table = at.dataframe[0].value
    assert table.iloc[0][["layer", "head"]].tolist() == [int(best[0]), int(best[1])]
    assert table["previous-token"].is_monotonic_decreasing
    data = _grid(at)  # each layer's heads in the same order
    assert data["rows"] == _rows(range(6), np.argsort(-prev, axis=1, kind="stable"))
    assert data["rows"][best[0]]["heads"][0] == best[1]
    shown = data["metrics"]["previous-token"][best[0]][best[1]]
    assert shown == pytest.approx(prev[best], abs=1e-5)
    at.toggle(key="ah_desc").set_value(False).run()
    assert at.dataframe[0].value["previous-token"].is_monotonic_increasing
    assert _grid(at)["rows"] == _rows(range(6), np.argsort(prev, axis=1, kind="stable"))
    assert at.query_params["ah_sort"] == "previous_token" and at.query_params["ah_desc"] == "0"


def test_layer_and_heads_per_layer_limit_the_grid():
    at = open_page("all_heads", s=SENTENCE, ah_layers="4")
    at.slider(key="ah_top").set_value(3).run()
    assert not at.exception
    assert _grid(at)["rows"] == [{"layer": 4, "heads": [0, 1, 2]}]
    table = at.dataframe[0].value
    assert table["layer"].tolist() == [4, 4, 4] and table["head"].tolist() == [0, 1, 2]
    assert at.query_params["ah_layers"] == "4" and at.query_params["ah_top"] == "3"


def test_hiding_special_tokens_shrinks_every_tile(model):
    at = open_page("all_heads", s=SENTENCE, hide_special="1")
    assert not at.exception
    data = _grid(at)
    assert data["hide_special"] is True  # the browser leaves out the tokens marked special
    special = trace_sentence(model, SENTENCE).tokens.special_t
    assert data["header"]["special"] == special.tolist() and (~special).sum() == 3
    assert any("[CLS]/[SEP] are left out" in c.value for c in at.caption)


def test_the_button_opens_the_top_head_on_the_pattern_page(model):
    at = open_page("all_heads", s=SENTENCE, ah_sort="broad")
    broad = reference_scores("minilm", SENTENCE)["broad"]  # how even: entropy over its most
    top = np.unravel_index(np.argmax(broad), broad.shape)
    table = at.dataframe[0].value
    assert table.iloc[0][["layer", "head"]].tolist() == [int(top[0]), int(top[1])]
    at.button(key="ah_open").click().run()
    assert not at.exception
    assert _opened(at) == (top[0], top[1])
    assert at.session_state["s"] == SENTENCE  # the sentence survives the page switch


def test_a_selected_table_row_opens_that_head():
    at = open_page("all_heads", s=SENTENCE)
    at.session_state["ah_table"] = {"selection": {"rows": [41], "columns": [], "cells": []}}
    at.run()
    assert at.button(key="ah_open").label == "Open layer 3, head 5 on the pattern page"
    at.button(key="ah_open").click().run()
    assert _opened(at) == (3, 5)


def _click_thumbnail(at, layer, head) -> None:
    """What the browser sends when a thumbnail is clicked: the grid's "open" trigger (AppTest
    cannot click inside a component)."""
    [element] = at.get("bidi_component")
    states = at._tree.get_widget_states()
    state = states.widgets.add()
    state.id = _make_trigger_id(element.proto.id, "events")
    state.json_trigger_value = json.dumps(
        [{"event": "open", "value": {"layer": layer, "head": head}}]
    )
    at._run(states)


def test_clicking_a_thumbnail_opens_that_head():
    at = open_page("all_heads", s=SENTENCE)
    _click_thumbnail(at, 5, 4)
    assert not at.exception
    assert _opened(at) == (5, 4)
    assert at.session_state["s"] == SENTENCE


def test_a_click_on_a_head_that_is_not_drawn_is_ignored():
    at = open_page("all_heads", s=SENTENCE, layer="2", head="0")
    _click_thumbnail(at, 9, 4)  # no layer 9: only a drawn head can be clicked
    assert not at.exception
    assert _title(at) == "All heads"
    assert (at.session_state["layer"], at.session_state["head"]) == (2, 0)


def test_long_text_is_averaged_into_small_tiles(model):
    at = open_page("all_heads", s=LONG)
    assert not at.exception
    n = trace_sentence(model, LONG).n_tokens
    assert n == 322
    [element] = at.get("bidi_component")
    data = _grid(at)
    assert data["header"]["n_tokens"] == n and data["rows"] == _rows(range(6), [range(12)] * 6)
    factor = -(-n // 48)
    assert any(f"each pixel is a {factor}×{factor} block" in c.value for c in at.caption)
    # The patterns travel over the explorer's route, not in the page: its data is smaller than
    # one head's pattern would be.
    assert len(element.proto.json) < n * n


def test_three_tokens(model):
    at = open_page("all_heads", s="hi")
    assert not at.exception
    data = _grid(at)
    assert data["header"]["tokens"] == list(trace_sentence(model, "hi").tokens.tokens)
    assert data["rows"] == _rows(range(6), [range(12)] * 6)
    assert len(at.dataframe[0].value) == 72


def test_the_decoders_270_heads_sorted_by_their_share_on_the_first_token(smollm2):
    # A decoder has no [CLS]/[SEP]: its sink is the first token; no "[SEP] sink" column, and a
    # link asking for that sort falls back to head number.
    at = open_page("all_heads", s=SENTENCE, model="smollm2", ah_sort="first_token")
    assert not at.exception and not at.error
    data = _grid(at)
    assert data["model"] == "smollm2" and data["header"]["causal"] is True
    assert [r["layer"] for r in data["rows"]] == list(range(30))
    assert all(sorted(r["heads"]) == list(range(9)) for r in data["rows"])
    sink = reference_scores("smollm2", SENTENCE)["first_token"]
    table = at.dataframe[0].value
    assert len(table) == 270 and "[SEP] sink" not in table.columns
    assert table["first-token sink"].is_monotonic_decreasing
    top = table.iloc[0]
    assert top["first-token sink"] == pytest.approx(sink.max(), abs=6e-4)
    assert sink[int(top["layer"]), int(top["head"])] == pytest.approx(sink.max(), abs=1e-5)
    at = open_page("all_heads", s=SENTENCE, model="smollm2", ah_sort="last_token")
    assert not at.exception and at.selectbox(key="ah_sort").value == "head"


def _role_map(at) -> dict:
    [chart] = [c for c in at.get("plotly_chart") if c.proto.id.endswith("ah_role_map")]
    return spec(chart)


@pytest.mark.parametrize(
    ("key", "text"),
    [
        ("minilm", "the dog saw the dog and the other dog saw the dog too"),
        ("smollm2", "the dog saw the dog and the other dog saw the dog too"),
        ("minilm", SENTENCE),
    ],
)
def test_the_role_map_names_each_head_as_the_rule_does_on_the_reference(key, text):
    at = open_page("all_heads", s=text, model=key)
    assert not at.exception
    ref = reference_scores(key, text)
    fig = _role_map(at)
    n_layers, n_heads = ref["self"].shape
    cells = fig["data"][0]
    z_lh = array(cells["z"])
    assert z_lh.shape == (n_layers, n_heads) and not np.isnan(z_lh).any()
    checked = 0
    for layer in range(n_layers):
        for head in range(n_heads):
            z = [z_lh[layer, head]]
            expected = reference_role(key, text, layer, head)
            if expected is None:
                continue
            role, score = expected
            assert MAP_ORDER[int(z[0])] == role, (layer, head)
            label, shown = cells["text"][layer][head].rsplit(" ", 1)
            assert label == SHORT[role] and abs(float(shown) - score) <= 0.005 + 1e-5
            checked += 1
    assert checked >= 0.9 * n_layers * n_heads
    legend = [t["name"] for t in fig["data"][1:]]
    assert legend and all(t["type"] == "scatter" for t in fig["data"][1:])
    words = " ".join(m.value for m in at.markdown)
    assert f"at least {MARGIN * 100:.0f} percentage points above" in words
    assert f"at least {BROAD:.0%} as even" in words
    total = sum(
        int(part.split(" ")[0])
        for part in words.split("**On this sentence:** ")[1].split(" (of ")[0].split(", ")
    )
    assert total == n_layers * n_heads
