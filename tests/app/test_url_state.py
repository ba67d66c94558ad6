"""Settings live in the URL: read on the first run, validated, written back on every run."""

import json

from tests.app.conftest import open_page


def _view(at) -> dict:
    """The view the pattern page hands the attention explorer (the browser draws it)."""
    [element] = at.get("bidi_component")
    assert element.proto.component_name == "attention_explorer"
    return json.loads(element.proto.json)["view"]


def test_settings_are_written_to_the_url():
    at = open_page("values", s="Jane visits Africa")
    at.sidebar.slider(key="layer").set_value(5)
    at.sidebar.slider(key="head").set_value(11).run()
    assert not at.exception
    qp = {k: at.query_params[k] for k in at.query_params}
    flat = {k: v[0] if isinstance(v, list) else v for k, v in qp.items()}
    assert flat["s"] == "Jane visits Africa"
    assert flat["layer"] == "5" and flat["head"] == "11"


def test_url_reproduces_the_view():
    at = open_page("pattern", s="dirty quantum plumbing", layer="3", head="9", causal="1")
    assert not at.exception and not at.sidebar.warning
    assert at.title[0].value == "Attention pattern"
    view = _view(at)
    assert (view["layer"], view["head"], view["causal"]) == (3, 9, True)
    assert at.session_state["causal"] is True
    assert (at.session_state["layer"], at.session_state["head"]) == (3, 9)
    assert at.sidebar.text_input(key="s").value == "dirty quantum plumbing"


def test_bad_url_values_fall_back_with_a_visible_warning():
    at = open_page("pattern", layer="99", head="-1", temp="abc", causal="maybe", bogus="1")
    assert not at.exception
    warnings = " ".join(w.value for w in at.sidebar.warning)
    for name in ("layer", "head", "temp", "causal", "bogus"):
        assert name in warnings
    view = _view(at)  # the defaults
    assert (view["layer"], view["head"], view["temp"], view["causal"]) == (2, 0, 1.0, False)
    assert (at.session_state["temp"], at.session_state["causal"]) == (1.0, False)


def test_preset_fills_the_sentence():
    at = open_page("pattern")
    at.sidebar.selectbox(key="preset").select("Jane visits Africa").run()
    assert at.session_state["s"] == "Jane visits Africa"
    ticks = [t.value for t in at.title]
    assert ticks and not at.exception


def test_typed_sentence_follows_the_user_across_pages():
    at = open_page("pattern")
    at.sidebar.text_input(key="s").input("the cat sat on the mat")
    at.sidebar.button[0].click().run()
    assert at.session_state["s"] == "the cat sat on the mat"
    at.switch_page("pages/values.py").run()
    assert at.sidebar.text_input(key="s").value == "the cat sat on the mat"


def test_empty_sentence_gives_a_prompt_not_a_chart():
    at = open_page("pattern", s="   ")
    assert not at.exception
    assert "Type a sentence" in at.info[0].value
    assert not at.get("plotly_chart") and not at.get("bidi_component")


def test_a_sentence_too_long_for_a_link_is_left_out_of_it_with_a_note():
    long = " ".join(f"word{i}" for i in range(1500))  # ~10 kB: fits the box, not a link
    at = open_page("values", s="Jane visits Africa")
    at.sidebar.text_input(key="s").input(long)
    at.sidebar.button[0].click().run()
    assert not at.exception
    assert "s" not in at.query_params
    notes = " ".join(c.value for c in at.sidebar.caption)
    assert "too long to keep in the page's link" in notes and "share the text itself" in notes
    at.sidebar.text_input(key="s").input("the river bank")
    at.sidebar.button[0].click().run()  # fits again: back in the link
    assert at.query_params["s"] in ("the river bank", ["the river bank"])
    assert "too long to keep" not in " ".join(c.value for c in at.sidebar.caption)
