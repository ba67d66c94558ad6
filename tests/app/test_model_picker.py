"""The model picker: the sidebar's choice goes into the URL, opens the sentence's view on the new
model (its layer and head within that model's sizes), and stays as the visitor moves between
pages. It offers the three models, and every screen shows one model: the sidebar, the URL and the
page agree. A page shows the visitor's pick when it can, else its own (Listen shows Whisper, the
decoder pages SmolLM2, the tour MiniLM); picking a model the page cannot show opens the page made
for it; a model shown again gets its layer and head back."""

from __future__ import annotations

from tests.app.conftest import explorer_report, open_page, url_param
from ui import registry, router

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


def _title(at):
    return at.title[0].value


def test_the_picker_offers_whisper_and_picking_it_opens_listen():
    at = open_page("pattern", model="smollm2")
    assert at.selectbox(key="model").options == [
        "all-MiniLM-L6-v2 (encoder)",
        "SmolLM2-135M-Instruct (decoder)",
        "Whisper tiny.en (speech → text)",
    ]
    at.selectbox(key="model").set_value("whisper").run()
    assert not at.exception and not at.error
    assert _title(at) == registry.page("listen").title
    assert at.selectbox(key="model").value == "whisper" and url_param(at, "model") == "whisper"
    # Whisper opens on one of its alignment heads, which the model's config.json names
    assert (at.session_state["layer"], at.session_state["head"]) == (3, 0)
    assert (url_param(at, "layer"), url_param(at, "head")) == ("3", None)  # head 0: the default
    assert [e.label for e in at.sidebar.expander] == ["The sentence of the text pages"]
    assert any("Whisper listens to audio" in c.value for c in at.sidebar.caption)


def test_a_text_page_after_listen_shows_the_text_model_and_head_picked_before():
    at = open_page("pattern", model="smollm2", layer="5", head="3")
    assert (at.session_state["layer"], at.session_state["head"]) == (5, 3)
    at.switch_page("pages/listen.py").run()
    assert not at.exception and at.selectbox(key="model").value == "whisper"
    assert (at.session_state["layer"], at.session_state["head"]) == (3, 0)  # within 4 × 6
    at.switch_page("pages/pattern.py").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="model").value == "smollm2" and url_param(at, "model") == "smollm2"
    assert (at.session_state["layer"], at.session_state["head"]) == (5, 3)
    assert (url_param(at, "layer"), url_param(at, "head")) == ("5", "3")


def test_picking_a_text_model_on_listen_opens_that_models_page():
    at = open_page("listen")
    assert at.selectbox(key="model").value == "whisper"
    at.selectbox(key="model").set_value("smollm2").run()
    assert not at.exception and not at.error
    assert _title(at).startswith("Inside a decoder")
    assert at.selectbox(key="model").value == "smollm2"


def test_the_decoder_page_shows_smollm2_in_the_sidebar_whatever_the_link_says():
    at = open_page("decoder", model="minilm")
    assert not at.exception and not at.error
    assert at.selectbox(key="model").value == "smollm2" and url_param(at, "model") == "smollm2"
    assert not any("whatever model the sidebar" in m.value for m in at.markdown)


def test_after_picking_whisper_a_text_page_shows_the_text_model_picked_before():
    at = open_page("pattern", model="smollm2", layer="5", head="3")
    at.selectbox(key="model").set_value("whisper").run()
    assert _title(at) == registry.page("listen").title
    at.switch_page("pages/pattern.py").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="model").value == "smollm2"  # the latest pick this page shows
    assert (at.session_state["layer"], at.session_state["head"]) == (5, 3)


def test_a_decoders_own_mask_is_not_taken_as_a_what_if_for_the_encoder():
    """SmolLM2's explorer reports its causal mask (fixed on: the model's own); MiniLM picked
    next must not open with the causal what-if switched on."""
    at = open_page("pattern", model="smollm2", s=SENTENCE)
    view = {"layer": 3, "head": 2, "causal": True, "scale": True, "temp": 1.0}
    explorer_report(at, "pattern_explorer", view)
    assert not at.exception and at.session_state["layer"] == 3
    assert at.session_state["causal"] is False and url_param(at, "causal") is None
    at.selectbox(key="model").set_value("minilm").run()
    assert at.session_state["causal"] is False and url_param(at, "causal") is None
