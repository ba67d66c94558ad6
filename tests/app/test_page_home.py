"""Start here draws the visitor's own sentence at once, on its most telling head."""

import json
import re

import pytest

from attention_core import trace_sentence
from attention_core.telling import telling_head
from tests.app.conftest import open_page
from ui.presets import CURATED


def _view(at) -> dict:
    [element] = [e for e in at.get("bidi_component") if e.proto.id.endswith("home_pattern")]
    return json.loads(element.proto.json)


def test_a_typed_sentence_opens_on_its_telling_head(model):
    text = "dirty quantum plumbing leaks everywhere"
    at = open_page(None, s=text)
    assert not at.exception
    pick = telling_head(trace_sentence(model, text))
    data = _view(at)
    assert data["header"]["tokens"] == list(trace_sentence(model, text).tokens.tokens)
    view = data["view"]
    assert (view["layer"], view["head"], view["q"], view["k"]) == (
        pick.layer,
        pick.head,
        pick.query,
        pick.key,
    )
    assert data["stages"] == ["pattern"] and data["tell"] is False  # it never moves the sidebar
    said = re.sub(r"\\(.)", r"\1", " ".join(m.value for m in at.markdown))  # Markdown escapes
    assert f"{pick.weight:.2f} of its attention" in said
    pattern = trace_sentence(model, text).pattern_lhqk
    assert pick.weight == pytest.approx(float(pattern[pick.layer, pick.head, pick.query, pick.key]))


@pytest.mark.parametrize("preset", CURATED[:2], ids=lambda p: p.sentence)
def test_a_preset_opens_on_its_curated_head_and_says_what_it_shows(model, preset):
    at = open_page(None, s=preset.sentence)
    assert not at.exception
    view = _view(at)["view"]
    assert (view["layer"], view["head"], view["q"], view["k"]) == (
        preset.layer,
        preset.head,
        preset.token,
        preset.key,
    )
    weight = trace_sentence(model, preset.sentence).pattern_lhqk[
        preset.layer, preset.head, preset.token, preset.key
    ]
    assert f"{weight:.2f}" in preset.claim
    assert any(preset.claim.split(":")[0] in m.value for m in at.markdown)


def test_the_path_says_what_delta_e_really_is():
    at = open_page(None)
    text = " ".join(m.value for m in at.markdown)
    assert "E′ = E + ΔE is the token's vector in context" not in text
    assert "LayerNorm" in text and "feed-forward" in text and "proposals" in text


def test_no_sentence_no_view():
    at = open_page(None, s="   ")
    assert not at.exception
    assert not at.get("bidi_component")
