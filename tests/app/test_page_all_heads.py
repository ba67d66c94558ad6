"""The All heads page: the grid and table show the model's own patterns and figures, sorting and
filters work, and every way of choosing a head opens it on the pattern page."""

from __future__ import annotations

import base64
import json
import os

import numpy as np
import pytest

from attention_core import load_model, summarize_heads, trace_sentence
from tests.app.conftest import open_page

os.environ.setdefault("HF_HUB_OFFLINE", "1")
SENTENCE = "dirty quantum plumbing"  # [CLS] dirty quantum plumbing [SEP]
LONG = " ".join(["the river bank was muddy after the rain"] * 40)  # 322 tokens


@pytest.fixture(scope="module")
def model():
    return load_model()


def _arr(value) -> np.ndarray:
    """A figure-JSON array: Plotly 7's base64 typed array, or a plain list."""
    if isinstance(value, dict):
        raw = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = value.get("shape")
        return raw.reshape([int(d) for d in str(shape).split(",")]) if shape else raw
    return np.asarray(value, dtype=float)


def _grid(at) -> dict:
    return json.loads(at.get("plotly_chart")[0].proto.spec)


def _title(at) -> str:
    return at.title[0].value


def test_defaults_draw_every_head_of_every_layer(model):
    at = open_page("all_heads", s=SENTENCE)
    assert not at.exception
    assert _title(at) == "All heads"
    spec = _grid(at)
    heat, dots = spec["data"]
    assert (heat["type"], dots["type"]) == ("heatmap", "scatter")
    z = _arr(heat["z"])
    assert z.shape == (6 * 6 - 1, 12 * 6 - 1)  # 5×5 tiles, 1-pixel gaps
    trace = trace_sentence(model, SENTENCE)
    np.testing.assert_allclose(z[3 * 6 : 3 * 6 + 5, 7 * 6 : 7 * 6 + 5], trace.pattern_lhqk[3, 7],
                               atol=5e-4)  # fmt: skip
    assert spec["layout"]["xaxis"]["ticktext"] == [f"H{h}" for h in range(12)]
    assert spec["layout"]["yaxis"]["ticktext"] == [f"L{la}" for la in range(6)]
    assert _arr(dots["customdata"]).reshape(72, -1)[29, :2].tolist() == [2, 5]
    table = at.dataframe[0].value
    assert len(table) == 72 and table.iloc[29][["layer", "head"]].tolist() == [2, 5]
    summary = summarize_heads(trace.pattern_lhqk, trace.tokens.special_t)
    np.testing.assert_allclose(table["entropy (bits)"], summary.entropy_lh.ravel(), atol=6e-4)
    np.testing.assert_allclose(table["share on [CLS]/[SEP]"], summary.special_share_lh.ravel(),
                               atol=6e-4)  # fmt: skip
    assert any(c.value.startswith("How to read this: each square") for c in at.caption)
    assert at.button(key="ah_open").label == "Open layer 0, head 0 on the pattern page"


def test_sorting_by_a_metric_ranks_heads_and_goes_into_the_url(model):
    at = open_page("all_heads", s=SENTENCE, ah_sort="previous")
    assert not at.exception
    trace = trace_sentence(model, SENTENCE)
    prev = summarize_heads(trace.pattern_lhqk, trace.tokens.special_t).previous_share_lh
    best = np.unravel_index(np.argmax(prev), prev.shape)
    table = at.dataframe[0].value
    assert table.iloc[0][["layer", "head"]].tolist() == [int(best[0]), int(best[1])]
    assert table["previous-token share"].is_monotonic_decreasing
    spec = _grid(at)
    assert spec["layout"]["xaxis"]["ticktext"][:2] == ["#1", "#2"]
    tags = [a["text"] for a in spec["layout"]["annotations"]]
    row = int(best[0])
    assert tags[row * 12] == f"H{best[1]} · {prev[best]:.2f}"
    at.toggle(key="ah_desc").set_value(False).run()
    assert at.dataframe[0].value["previous-token share"].is_monotonic_increasing
    assert at.query_params["ah_sort"] == "previous" and at.query_params["ah_desc"] == "0"


def test_layer_and_heads_per_layer_limit_the_grid():
    at = open_page("all_heads", s=SENTENCE, ah_layers="4")
    at.slider(key="ah_top").set_value(3).run()
    assert not at.exception
    z = _arr(_grid(at)["data"][0]["z"])
    assert z.shape == (5, 3 * 6 - 1)
    table = at.dataframe[0].value
    assert table["layer"].tolist() == [4, 4, 4] and table["head"].tolist() == [0, 1, 2]
    assert at.query_params["ah_layers"] == "4" and at.query_params["ah_top"] == "3"


def test_hiding_special_tokens_shrinks_every_tile():
    at = open_page("all_heads", s=SENTENCE, hide_special="1")
    assert not at.exception
    assert _arr(_grid(at)["data"][0]["z"]).shape == (6 * 4 - 1, 12 * 4 - 1)
    assert any("[CLS]/[SEP] are left out" in c.value for c in at.caption)


def test_the_button_opens_the_top_head_on_the_pattern_page(model):
    at = open_page("all_heads", s=SENTENCE, ah_sort="entropy")
    table = at.dataframe[0].value
    top = {"layer": int(table["layer"].iloc[0]), "head": int(table["head"].iloc[0])}
    at.button(key="ah_open").click().run()
    assert not at.exception
    assert _title(at) == f"Attention pattern · layer {top['layer']}, head {top['head']}"
    assert at.session_state["s"] == SENTENCE  # the sentence survives the page switch


def test_a_selected_table_row_opens_that_head():
    at = open_page("all_heads", s=SENTENCE)
    at.session_state["ah_table"] = {"selection": {"rows": [41], "columns": [], "cells": []}}
    at.run()
    assert at.button(key="ah_open").label == "Open layer 3, head 5 on the pattern page"
    at.button(key="ah_open").click().run()
    assert _title(at) == "Attention pattern · layer 3, head 5"


def test_clicking_a_thumbnail_opens_that_head():
    at = open_page("all_heads", s=SENTENCE)
    chart = at.get("plotly_chart")[0]
    custom = _arr(json.loads(chart.proto.spec)["data"][1]["customdata"]).reshape(72, -1)
    point = {"curve_number": 1, "point_index": 64, "customdata": custom[64].tolist()}
    # What the browser sends when a scatter point is clicked (AppTest cannot click Plotly).
    states = at._tree.get_widget_states()
    state = states.widgets.add()
    state.id = chart.proto.id
    state.string_value = json.dumps(
        {"selection": {"points": [point], "point_indices": [64], "box": [], "lasso": []}}
    )
    at._run(states)
    assert not at.exception
    assert _title(at) == "Attention pattern · layer 5, head 4"


def test_long_text_is_averaged_into_small_tiles():
    at = open_page("all_heads", s=LONG)
    assert not at.exception
    z = _arr(_grid(at)["data"][0]["z"])
    n = 322
    factor = -(-n // 48)
    side = -(-n // factor)
    gap = round(side / 10)
    assert z.shape == (6 * (side + gap) - gap, 12 * (side + gap) - gap)
    assert any(f"each pixel is a {factor}×{factor} block" in c.value for c in at.caption)
    assert len(at.get("plotly_chart")[0].proto.spec) < 2_000_000


def test_three_tokens():
    at = open_page("all_heads", s="hi")
    assert not at.exception
    assert _arr(_grid(at)["data"][0]["z"]).shape == (6 * 4 - 1, 12 * 4 - 1)
