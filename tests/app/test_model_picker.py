"""The model picker: the sidebar's choice goes into the URL, opens the sentence's view on the new
model (its layer and head within that model's sizes), and stays as the visitor moves between
pages."""

from __future__ import annotations

from tests.app.conftest import open_page
from ui import router

SENTENCE = "The river bank was muddy"


def test_picking_smollm2_opens_its_view_and_stays_across_pages():
    at = open_page("values", s=SENTENCE, layer="5", head="11")
    assert not at.exception and at.session_state["model"] == "minilm"
    at.sidebar.selectbox(key="model").select("smollm2").run()
    assert not at.exception and not at.error
    assert at.query_params["model"] == "smollm2"
    view = router.opening_view("smollm2", SENTENCE)  # the sentence's telling head on SmolLM2
    assert view is not None and view.key != 0  # never the first token (the attention sink)
    assert (at.session_state["layer"], at.session_state["head"]) == (view.layer, view.head)
    assert at.sidebar.slider(key="layer").max == 29 and at.sidebar.slider(key="head").max == 8
    assert at.title[0].value == f"Value updates ΔE · layer {view.layer}, head {view.head}"
    at.switch_page("pages/all_heads.py").run()
    assert not at.exception and at.session_state["model"] == "smollm2"
    assert at.dataframe[0].value.shape[0] == 270
    at.sidebar.selectbox(key="model").select("minilm").run()
    assert not at.exception and at.session_state["model"] == "minilm"
    assert at.session_state["layer"] <= 5 and at.session_state["head"] <= 11
    assert at.dataframe[0].value.shape[0] == 72


def test_heads_per_layer_stays_every_head_or_the_number_chosen():
    at = open_page("all_heads", s=SENTENCE, model="smollm2")
    assert at.slider(key="ah_top").value == 9
    at.slider(key="ah_top").set_value(4).run()
    assert at.dataframe[0].value.shape[0] == 30 * 4  # a choice within the model is kept
    at.sidebar.selectbox(key="model").select("minilm").run()
    assert at.slider(key="ah_top").value == 4 and at.dataframe[0].value.shape[0] == 6 * 4
    at.slider(key="ah_top").set_value(12).run()
    at.sidebar.selectbox(key="model").select("smollm2").run()
    assert at.slider(key="ah_top").value == 9  # every head of the new model
