"""The Compare page against the engine: both patterns, the shared word's cosine per layer."""

import json

import numpy as np
import pytest

from attention_core import cosine, trace_sentence
from tests.app.conftest import open_page, url_param
from tests.figdata import array, spec

A = "The river bank was muddy"
B = "I made a deposit at the bank"


@pytest.fixture(scope="module")
def pair(model):
    return trace_sentence(model, A), trace_sentence(model, B)


def _charts(at):
    """Plotly figures and explorer views (its JSON data) by key, in page order."""
    return {
        c.proto.id.rsplit("-", 1)[-1]: spec(c)
        if c.type == "plotly_chart"
        else json.loads(c.proto.json)
        for c in at.main
        if c.type in ("plotly_chart", "bidi_component")
    }


def test_defaults_compare_bank_by_the_river_and_at_the_bank(pair):
    a, b = pair
    at = open_page("compare", layer="4", head="7")
    assert not at.exception
    assert at.title[0].value == "Compare two sentences · layer 4, head 7"
    assert at.text_input(key="cmp_a").value == A and at.text_input(key="cmp_b").value == B
    charts = _charts(at)
    for name, trace in (("a", a), ("b", b)):  # the browser draws each head's softmax pattern
        view = charts[f"cmp_pattern_{name}"]
        assert view["header"]["tokens"] == list(trace.tokens.tokens)
        assert view["stages"] == ["pattern"] and (view["view"]["layer"], view["view"]["head"]) == (
            4,
            7,
        )
        assert not view["view"]["causal"] and view["view"]["scale"] and view["view"]["temp"] == 1
    word = at.selectbox(key="cmp_word")
    assert word.value == "bank" and list(word.options) == ["the", "bank"]
    expected = cosine(a.hidden_ltd[:, 3], b.hidden_ltd[:, 7])  # "bank": position 3 vs 7
    np.testing.assert_allclose(array(charts["cmp_similarity"]["data"][0]["y"]), expected, atol=1e-6)
    np.testing.assert_allclose(at.dataframe[0].value["cosine"], expected, atol=1e-6)
    assert 0.9 < expected[0] < 1 - 1e-3  # layer 0 differs only by the position embeddings
    caption = " ".join(c.value for c in at.caption)
    assert f"{expected[0]:.3f}" in caption and "position 3 in A and 7 in B" in caption
    assert "position embeddings" in caption
    assert charts["cmp_similarity"]["layout"]["shapes"][0]["x0"] == 5  # after block 4


def test_choosing_another_shared_word_goes_to_the_url(pair):
    a, b = pair
    at = open_page("compare")
    at.selectbox(key="cmp_word").select("the").run()
    assert not at.exception
    expected = cosine(a.hidden_ltd[:, 1], b.hidden_ltd[:, 6])
    np.testing.assert_allclose(at.dataframe[0].value["cosine"], expected, atol=1e-6)
    assert url_param(at, "cmp_word") == "the"


def test_custom_sentences_from_the_url_average_a_split_word(model):
    one, two = "Wazowski met Wazowski", "Mike Wazowski smiled"
    at = open_page("compare", cmp_a=one, cmp_b=two, hide_special="1")
    assert not at.exception
    assert at.selectbox(key="cmp_word").value == "wazowski"  # no "bank": the first shared word
    x, y = trace_sentence(model, one), trace_sentence(model, two)
    expected = cosine(x.hidden_ltd[:, 1:4].mean(axis=1), y.hidden_ltd[:, 2:5].mean(axis=1))
    np.testing.assert_allclose(at.dataframe[0].value["cosine"], expected, atol=1e-6)
    view = _charts(at)["cmp_pattern_a"]
    assert view["view"]["hide_special"] and view["header"]["tokens"] == list(x.tokens.tokens)
    assert url_param(at, "cmp_a") == one


def test_same_word_at_the_same_position_starts_identical(model):
    at = open_page("compare", cmp_a="bank robbers ran", cmp_b="bank holidays are fun")
    values = at.dataframe[0].value["cosine"]
    assert values[0] == pytest.approx(1.0, abs=1e-6)
    assert values.iloc[-1] < 0.99  # context pulls them apart
    assert "identical" in " ".join(c.value for c in at.caption)


def test_no_shared_word_says_so_and_still_shows_both_patterns():
    at = open_page("compare", cmp_a="dirty quantum plumbing", cmp_b="Jane visits Africa")
    assert not at.exception
    assert list(_charts(at)) == ["cmp_pattern_a", "cmp_pattern_b"]
    assert "share no word" in at.info[0].value
    assert not at.dataframe


def test_an_empty_box_gives_a_prompt_not_an_empty_chart():
    at = open_page("compare")
    at.text_input(key="cmp_b").input("   ").run()
    assert not at.exception
    assert list(_charts(at)) == ["cmp_pattern_a"]
    infos = [i.value for i in at.info]
    assert any("Type sentence B" in i for i in infos) and any("both sentences" in i for i in infos)
    at.text_input(key="cmp_b").input("A bank of fog").run()
    assert list(_charts(at)) == ["cmp_pattern_a", "cmp_pattern_b", "cmp_similarity"]


def test_a_rotary_model_starts_both_words_from_one_vector(smollm2):
    """SmolLM2 adds no position vector: "bank" at positions 2 and 6 starts identical, and the
    caption must not speak of position embeddings."""
    at = open_page(
        "compare",
        model="smollm2",
        cmp_a="The river bank was muddy",
        cmp_b="I made a deposit at the bank",
    )
    assert not at.exception
    caption = " ".join(c.value for c in at.caption)
    cos = at.dataframe[0].value["cosine"].to_numpy()
    assert cos[0] == pytest.approx(1.0, abs=1e-6)
    assert f"the cosine is {cos[0]:.3f}" in caption and "adds no position vector" in caption
    assert "position embeddings were added" not in caption
