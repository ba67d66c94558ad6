"""The Embedding shift page against the engine: PCA plane, probe cosines, trajectory, URL state."""

import numpy as np
import pytest

from attention_core import cosine, embed_words, fit_shift_plane, trace_sentence
from tests.app.conftest import open_page
from tests.figdata import array, spec
from ui.presets import BANK_PROBES, DEFAULT_PROBES, probes_for

RIVER = "The river bank was muddy"
PROBES = list(probes_for(RIVER))  # the preset's own probes: two of each sense of "bank"


@pytest.fixture(scope="module")
def river(model):
    trace = trace_sentence(model, RIVER)
    return trace, embed_words(model, PROBES)


def _chart(at, key):
    return next(spec(c) for c in at.get("plotly_chart") if c.proto.id.endswith(f"-{key}"))


def _xy(trace):
    return np.stack([array(trace["x"]), array(trace["y"])], axis=1)


def _param(at, name):
    value = at.query_params[name]
    return value[0] if isinstance(value, list) else value


def test_defaults_follow_bank_towards_the_probes(river):
    trace, probes = river
    at = open_page("embedding_shift", s=RIVER)
    assert not at.exception and not at.warning
    assert at.title[0].value == "Embedding shift · after layer 2"
    assert list(BANK_PROBES) == PROBES and not set(PROBES) & set(RIVER.lower().split())
    assert at.text_input(key="es_probes").value == ", ".join(PROBES)
    assert _param(at, "es_probes") == ", ".join(PROBES)  # not the URL default: in the link
    assert at.selectbox(key="es_token").value == 3  # "bank": closest to the probes, not a probe
    assert _param(at, "es_token") == "3"
    table = at.dataframe[0].value
    assert list(table["probe"]) == PROBES
    before = cosine(trace.hidden_ltd[0, 3], probes[0])
    after = cosine(trace.hidden_ltd[3, 3], probes[3])  # sidebar layer 2 -> after 3 blocks
    np.testing.assert_allclose(table["static (layer 0)"], before, atol=1e-6)
    np.testing.assert_allclose(table["layer 3 · after block 2"], after, atol=1e-6)
    np.testing.assert_allclose(table["change"], after - before, atol=1e-6)
    bars = _chart(at, "es_probe_bars")["data"]
    np.testing.assert_allclose(array(bars[1]["y"]), after, atol=1e-6)
    assert any("hidden_ltd[0]" in c.value and "hidden_ltd[L]" in c.value for c in at.caption)


def test_plane_is_one_pca_over_every_layer_of_tokens_and_probes(river):
    trace, probes = river
    at = open_page("embedding_shift", s=RIVER)
    pca, tokens_lt2, probes_lp2 = fit_shift_plane(trace.hidden_ltd, np.arange(7), probes)
    fig = _chart(at, "es_plane")
    np.testing.assert_allclose(_xy(fig["data"][0]), tokens_lt2[0], atol=1e-4)  # static
    np.testing.assert_allclose(_xy(fig["data"][1]), tokens_lt2[3], atol=1e-4)  # layer 3
    np.testing.assert_allclose(_xy(fig["data"][2]), probes_lp2[3], atol=1e-4)
    assert len(fig["frames"]) == 7
    np.testing.assert_allclose(_xy(fig["frames"][6]["data"][0]), tokens_lt2[6], atol=1e-4)
    assert fig["data"][1]["text"] == list(trace.tokens.tokens)
    ratio = pca.explained_ratio_c
    assert fig["layout"]["xaxis"]["title"]["text"] == f"PC1 ({ratio[0]:.0%} of variance)"
    line = _chart(at, "es_trajectory")["data"][0]
    np.testing.assert_allclose(_xy(line), tokens_lt2[:, 3], atol=1e-4)


def test_layer_and_token_choices_update_every_number(river):
    trace, probes = river
    at = open_page("embedding_shift", s=RIVER)
    at.sidebar.slider(key="layer").set_value(5).run()
    at.selectbox(key="es_token").select(2).run()  # "river"
    assert not at.exception
    table = at.dataframe[0].value
    np.testing.assert_allclose(table["layer 6 · after block 5"],
                               cosine(trace.hidden_ltd[6, 2], probes[6]), atol=1e-6)  # fmt: skip
    lines = _chart(at, "es_probe_lines")["data"]
    assert [t["name"] for t in lines] == PROBES
    expected_lp = cosine(trace.hidden_ltd[:, 2][:, None], probes)
    for j, t in enumerate(lines):
        np.testing.assert_allclose(array(t["y"]), expected_lp[:, j], atol=1e-6)
    assert _chart(at, "es_plane")["layout"]["sliders"][0]["active"] == 6
    assert _param(at, "es_token") == "2" and _param(at, "layer") == "5"


def test_probes_from_the_url_with_bad_items_warn_and_are_dropped(model):
    long = "x" * 41
    at = open_page("embedding_shift", s=RIVER, es_probes=f"Money, , money, {long}", es_token="5")
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "empty" in warnings and "40 characters" in warnings and "repeated" in warnings
    assert list(at.dataframe[0].value["probe"]) == ["Money"]
    trace = trace_sentence(model, RIVER)
    money = embed_words(model, ["Money"])
    np.testing.assert_allclose(at.dataframe[0].value["static (layer 0)"],
                               cosine(trace.hidden_ltd[0, 5], money[0]), atol=1e-6)  # fmt: skip
    assert at.selectbox(key="es_token").value == 5


def test_no_probes_still_shows_the_plane_and_the_path():
    at = open_page("embedding_shift", s=RIVER, es_probes="")
    assert not at.exception
    assert "at least one probe" in at.info[0].value
    ids = [c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart")]
    assert ids == ["es_plane", "es_trajectory"] and not at.dataframe


def test_probe_defaults_follow_the_preset_until_edited():
    plumbing = ", ".join(probes_for("dirty quantum plumbing"))
    at = open_page("embedding_shift", s="dirty quantum plumbing")
    assert at.text_input(key="es_probes").value == plumbing
    assert _param(at, "es_probes") == plumbing
    at.text_input(key="s").input("Jane visits Africa")
    at.button[0].click().run()
    assert at.text_input(key="es_probes").value == ", ".join(probes_for("Jane visits Africa"))
    at.text_input(key="es_probes").input("tea, coffee").run()
    at.text_input(key="s").input("The river bank was muddy")
    at.button[0].click().run()
    assert not at.exception
    assert at.text_input(key="es_probes").value == "tea, coffee"
    assert list(at.dataframe[0].value["probe"]) == ["tea", "coffee"]


def test_a_typed_sentence_gets_the_generic_probes_and_keeps_them_out_of_the_link(model):
    typed = "the cat sat on the mat"
    assert probes_for(typed) == DEFAULT_PROBES
    at = open_page("embedding_shift", s=typed)
    assert not at.exception and not at.warning
    assert at.text_input(key="es_probes").value == ", ".join(DEFAULT_PROBES)
    assert "es_probes" not in at.query_params  # the URL default is the generic probes
    table = at.dataframe[0].value
    assert list(table["probe"]) == list(DEFAULT_PROBES)
    token = at.selectbox(key="es_token").value
    trace = trace_sentence(model, typed)
    np.testing.assert_allclose(table["static (layer 0)"],
                               cosine(trace.hidden_ltd[0, token],
                                      embed_words(model, list(DEFAULT_PROBES))[0]),
                               atol=1e-6)  # fmt: skip


def test_hidden_specials_leave_the_plane(river):
    at = open_page("embedding_shift", s=RIVER, hide_special="1")
    assert not at.exception
    texts = _chart(at, "es_plane")["data"][1]["text"]
    assert texts == ["the", "river", "bank", "was", "muddy"]
    options = at.selectbox(key="es_token").options
    assert not any("[CLS]" in o or "[SEP]" in o for o in options)
