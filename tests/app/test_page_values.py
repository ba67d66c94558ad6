"""The Value updates page: every number shown is the forward pass's own, for the chosen token,
layer and head; the token choice follows the URL and the sentence."""

from __future__ import annotations

import base64
import json
import os
import re

import numpy as np
import pytest

from attention_core import load_model, output_bias, trace_sentence
from tests.app.conftest import open_page
from ui.presets import curated

os.environ.setdefault("HF_HUB_OFFLINE", "1")
SENTENCE = "dirty quantum plumbing"  # [CLS] dirty quantum plumbing [SEP]
DEFAULT = "The river bank was muddy"  # the last real word, "muddy", is token 5
LONG = " ".join(["the river bank was muddy after the rain"] * 40)  # 322 tokens


@pytest.fixture(scope="module")
def model():
    return load_model()


def _arr(value) -> np.ndarray:
    """A figure-JSON array: Plotly 7's base64 typed array, or a plain list."""
    if isinstance(value, dict):
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
    return np.asarray(value, dtype=float)


def _charts(at) -> dict[str, dict]:
    """The page's figures by chart key."""
    return {c.proto.id.rsplit("-", 1)[-1]: json.loads(c.proto.spec) for c in at.get("plotly_chart")}


def _check_numbers(at, trace, model, layer: int, head: int, token: int) -> None:
    """The worked table, the step table and the charts against attention_core."""
    n = trace.n_tokens
    table = at.dataframe[0].value
    assert table["token"].tolist() == list(trace.tokens.tokens)
    np.testing.assert_array_equal(
        table["weight a_j"].to_numpy(np.float32), trace.pattern_lhqk[layer, head, token]
    )
    v = trace.v_lhke[layer, head]
    np.testing.assert_allclose(table["V[3]"], v[:, 3], atol=1e-6)
    np.testing.assert_allclose(table["‖V_j‖"], np.linalg.norm(v, axis=-1), atol=1e-5)
    steps = at.dataframe[1].value.set_index("vector")
    dims = [f"[{e}]" for e in range(8)]
    z = trace.z_lhqe[layer, head, token]
    np.testing.assert_allclose(steps.loc["z = Σ a_j V_j", dims], z[:8], atol=1e-5)
    np.testing.assert_allclose(steps.loc["z = Σ a_j V_j", "size ‖·‖"], np.linalg.norm(z), atol=1e-5)
    delta = trace.delta_ltd[layer, token]
    head_delta = trace.head_delta_lhtd[layer, head, token]
    np.testing.assert_allclose(  # one token's row vs the whole layer's matmul: float32 rounding
        steps.loc["ΔE_h = z · W_O (this head)", dims], head_delta[:8], atol=1e-6
    )
    np.testing.assert_allclose(steps.loc["Σ_h ΔE_h + b_O (all heads)", dims], delta[:8], atol=1e-5)
    np.testing.assert_allclose(steps.loc["ΔE (the layer's update)", dims], delta[:8])
    updated = trace.hidden_ltd[layer, token] + delta
    np.testing.assert_allclose(steps.loc["E + ΔE (before LayerNorm)", dims], updated[:8])
    charts = _charts(at)
    heads = _arr(charts["v_heads"]["data"][0]["y"])
    np.testing.assert_allclose(
        heads, np.linalg.norm(trace.head_delta_lhtd[layer, :, token], axis=-1), rtol=1e-6
    )
    assert charts["v_heads"]["data"][0]["marker"]["color"][head] == "#E69F00"
    sizes = _arr(charts["v_tokens"]["data"][0]["y"])
    assert sizes.size == n
    np.testing.assert_allclose(sizes, np.linalg.norm(trace.delta_ltd[layer], axis=-1), rtol=1e-6)
    bias = output_bias(model, layer).astype(np.float64)
    # Like with like: the page sums one token's per-head rows (head_delta_hd), so the check does
    # too; the whole-layer matmul rounds differently in float32 (2.4e-7 vs 1.2e-7 at 322 tokens).
    heads_hd = trace.head_delta_hd(layer, token).astype(np.float64)
    heads_sum = (heads_hd.sum(0) + bias).astype(np.float32)
    check = next(m.value for m in at.markdown if "- Check:" in m.value)  # For engineers
    shown = float(re.search(r"largest difference (\S+) over", check)[1])
    assert shown < 1e-5
    assert shown == pytest.approx(float(np.abs(heads_sum - delta).max()), rel=0.01, abs=1e-12)


def test_defaults_follow_the_last_word(model):
    at = open_page("values", s=DEFAULT)  # a preset: it opens on its curated head
    assert not at.exception
    preset = curated(DEFAULT)
    assert at.title[0].value == f"Value updates ΔE · layer {preset.layer}, head {preset.head}"
    assert at.selectbox(key="v_token").value == 5
    _check_numbers(at, trace_sentence(model, DEFAULT), model, preset.layer, preset.head, 5)
    assert at.get("download_button")[0].proto.label == "Worked table (.csv)"
    captions = [c.value for c in at.caption if c.value.startswith("How to read this")]
    assert len(captions) == 5


def test_url_parameters_choose_token_layer_and_head(model):
    at = open_page("values", s=SENTENCE, v_token="2", layer="4", head="7")
    assert not at.exception
    assert at.title[0].value == "Value updates ΔE · layer 4, head 7"
    trace = trace_sentence(model, SENTENCE)
    _check_numbers(at, trace, model, 4, 7, 2)
    weights = trace.pattern_lhqk[4, 7, 2]
    formula = next(m.value for m in at.markdown if m.value.startswith("z₂ = "))
    top = int(np.argmax(weights))
    assert formula.split(" = ")[2].startswith(f"{weights[top]:.3f}·V")
    bars = _charts(at)["v_weights"]["data"][0]
    np.testing.assert_array_equal(_arr(bars["y"]), weights)
    assert at.query_params["v_token"] == "2"


def test_choosing_a_token_and_a_head_in_the_page(model):
    at = open_page("values", s=SENTENCE, layer="2")
    at.selectbox(key="v_token").select(1).run()
    at.sidebar.slider(key="head").set_value(9).run()
    assert not at.exception
    _check_numbers(at, trace_sentence(model, SENTENCE), model, 2, 9, 1)
    assert at.query_params["v_token"] == "1" and at.query_params["head"] == "9"


def test_a_new_sentence_resets_the_token_to_its_last_word():
    at = open_page("values", s=SENTENCE, v_token="1")
    at.text_input(key="s").input("Jane visits Africa")
    at.button[0].click().run()
    assert not at.exception
    assert at.selectbox(key="v_token").value == 3  # [CLS] jane visits africa [SEP]


def test_hiding_special_tokens(model):
    at = open_page("values", s=SENTENCE, hide_special="1")
    assert not at.exception
    assert at.selectbox(key="v_token").options == ["1: dirty", "2: quantum", "3: plumbing"]
    charts = _charts(at)
    assert len(_arr(charts["v_tokens"]["data"][0]["y"])) == 3
    assert len(charts["v_weights"]["data"][0]["x"]) == 3
    assert len(at.dataframe[0].value) == 5  # the sum still needs every key
    assert any("[CLS]/[SEP] carry" in c.value for c in at.caption)


def test_long_custom_text(model):
    at = open_page("values", s=LONG, layer="2", head="0")
    assert not at.exception
    trace = trace_sentence(model, LONG)
    assert trace.n_tokens == 322
    assert at.selectbox(key="v_token").value == 320  # "rain"
    _check_numbers(at, trace, model, 2, 0, 320)
    assert "more keys" in next(m.value for m in at.markdown if m.value.startswith("z"))


def test_three_tokens(model):
    at = open_page("values", s="hi")
    assert not at.exception
    _check_numbers(at, trace_sentence(model, "hi"), model, 2, 0, 1)


def test_checks_and_widths_are_for_engineers_and_learners_get_three_decimals():
    at = open_page("values", s=SENTENCE, layer="2", head="3")
    assert not at.exception
    [box] = [e for e in at.expander if e.label == "For engineers"]
    assert not box.proto.expanded
    inside = " ".join(m.value for m in box.markdown)
    assert "float32" in inside and "d_head" in inside
    learner = " ".join(
        m.value for m in [*at.markdown, *at.caption] if m.value not in inside and "`" not in m.value
    )
    for word in ("float32", "numbers wide", "-number", "3Blue1Brown", "e-0"):
        assert word not in learner, word
    assert "The notes write this sum" in learner
    assert "width" not in at.dataframe[1].value.columns
    formats = [
        json.loads(df.proto.columns)
        for df in at.dataframe
        if df.proto.columns  # the column configs sent to the browser
    ]
    assert formats and all(
        config.get("type_config", {}).get("format", "%.3f") == "%.3f"
        for columns in formats
        for config in columns.values()
    ), formats


def test_z_is_said_to_have_fewer_numbers_not_to_be_shorter(model):
    """z has d_k numbers where a token's vector has the model's width: "fewer numbers", not
    "shorter", which a learner reads as a smaller length (issue 35)."""
    at = open_page("values")
    said = " ".join(c.value for c in at.caption)
    assert "z has fewer numbers than the token's vector" in said and "z is shorter" not in said
    assert model.config.d_head < model.config.d_model  # what the sentence says, on this model


@pytest.mark.parametrize("model", ["minilm", "smollm2"])
def test_the_layer_update_caption_names_a_bias_only_where_the_model_has_one(model):
    """Section 5's caption: "plus the bias b_O" on MiniLM, whose output projection has a bias in
    transformers' BertModel; "no bias b_O" on SmolLM2, whose o_proj has none in transformers."""
    from tests.core.oracles import oracle

    ora = oracle(model)
    out = (
        ora.model.encoder.layer[0].attention.output.dense
        if model == "minilm"
        else ora.model.model.layers[0].self_attn.o_proj
    )
    at = open_page("values", model=model, s="the river bank was muddy")
    assert not at.exception
    [said] = [c.value for c in at.caption if "the whole layer's update ΔE" in c.value]
    if out.bias is None:
        assert "this model has no bias b_O" in said and "plus the bias" not in said
    else:
        assert "plus the bias b_O" in said
