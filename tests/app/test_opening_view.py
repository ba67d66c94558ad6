"""Every page opens on a view that shows something when the link names no head: a preset's
curated head, or the sentence's most telling head; a link's own layer and head always win."""

import pytest

from attention_core import trace_sentence
from attention_core.methods.telling import telling_head
from tests.app.conftest import open_page, url_param
from ui.presets import CURATED, curated

TYPED = "dirty quantum plumbing leaks everywhere"


@pytest.mark.parametrize("page", ["values", "pattern", "learn"])
def test_a_preset_opens_on_its_curated_head(page):
    preset = CURATED[0]
    at = open_page(page, s=preset.sentence)
    assert not at.exception
    assert (at.session_state["layer"], at.session_state["head"]) == (preset.layer, preset.head)
    assert (url_param(at, "layer"), url_param(at, "head")) == (str(preset.layer), str(preset.head))


def test_a_typed_sentence_opens_on_its_telling_head(model):
    pick = telling_head(trace_sentence(model, TYPED))
    at = open_page("pattern", s=TYPED)
    assert not at.exception
    assert (at.session_state["layer"], at.session_state["head"]) == (pick.layer, pick.head)
    assert (at.session_state["q"], at.session_state["k"]) == (pick.query, pick.key)


def test_a_link_with_a_head_keeps_it():
    at = open_page("values", s=CURATED[0].sentence, layer="4", head="7")
    assert not at.exception
    assert (at.session_state["layer"], at.session_state["head"]) == (4, 7)


def test_picking_an_example_opens_on_its_point():
    at = open_page("pattern", s=TYPED, layer="5", head="5")
    preset = curated("I made a deposit at the bank")
    at.sidebar.selectbox(key="preset").select(preset.sentence).run()
    assert not at.exception
    assert at.session_state["s"] == preset.sentence
    assert (at.session_state["layer"], at.session_state["head"]) == (preset.layer, preset.head)
    assert (at.session_state["q"], at.session_state["k"]) == (preset.token, preset.key)
    assert url_param(at, "head") == str(preset.head)


def test_nothing_to_show_keeps_the_defaults():
    at = open_page("values", s="   ")
    assert not at.exception
    assert (at.session_state["layer"], at.session_state["head"]) == (2, 0)
