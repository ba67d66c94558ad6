"""The Embedding shift page against the engine: PCA plane, probe cosines relative to their mean
over the probes, trajectory, URL state, and one numbering of layers and hidden states."""

import numpy as np
import pytest

from attention_core import cosine, embed_words, fit_shift_plane, trace_sentence
from tests.app.conftest import open_page, url_param
from tests.figdata import array, spec
from ui.presets import BANK_PROBES, DEFAULT_PROBES, probes_for

RIVER = "The river bank was muddy"
PROBES = list(probes_for(RIVER))  # the preset's own probes: two of each sense of "bank"
STATES = ["embedding", *(f"after layer {i}" for i in range(6))]


@pytest.fixture(scope="module")
def river(model):
    trace = trace_sentence(model, RIVER)
    return trace, embed_words(model, PROBES)


def _chart(at, key):
    return next(spec(c) for c in at.get("plotly_chart") if c.proto.id.endswith(f"-{key}"))


def _xy(trace):
    return np.stack([array(trace["x"]), array(trace["y"])], axis=1)


def _relative(raw_p):
    return raw_p - raw_p.mean()


def _learner_text(at):
    """Every title, subheader, caption and markdown outside the "For engineers" expander."""
    inside = {m.value for m in at.expander[0].markdown}
    texts = [*at.title, *at.subheader, *at.caption, *at.markdown, *at.info]
    return [t.value for t in texts if t.value not in inside]


def test_defaults_follow_bank_relative_to_the_probes(river):
    trace, probes = river
    at = open_page("embedding_shift", s=RIVER, layer="2")
    assert not at.exception and not at.warning
    assert at.title[0].value == "Embedding shift · after layer 2"
    assert list(BANK_PROBES) == PROBES and not set(PROBES) & set(RIVER.lower().split())
    assert at.text_input(key="es_probes").value == ", ".join(PROBES)
    assert url_param(at, "es_probes") == ", ".join(PROBES)  # not the URL default: in the link
    assert at.selectbox(key="es_token").value == 3  # "bank": closest to the probes, not a probe
    assert url_param(at, "es_token") == "3"
    raw0 = cosine(trace.hidden_ltd[0, 3], probes[0])  # the embeddings
    raw = cosine(trace.hidden_ltd[3, 3], probes[3])  # the sidebar's layer 2 -> after layer 2
    table = at.dataframe[0].value
    assert list(table.columns) == [
        "probe",
        "relative · embedding",
        "relative · after layer 2",
        "relative change",
        "raw cosine · embedding",
        "raw cosine · after layer 2",
    ]
    assert list(table["probe"]) == PROBES
    np.testing.assert_allclose(table["relative · embedding"], _relative(raw0), atol=1e-6)
    np.testing.assert_allclose(table["relative · after layer 2"], _relative(raw), atol=1e-6)
    np.testing.assert_allclose(
        table["relative change"], _relative(raw) - _relative(raw0), atol=1e-6
    )
    np.testing.assert_allclose(table["raw cosine · embedding"], raw0, atol=1e-6)
    np.testing.assert_allclose(table["raw cosine · after layer 2"], raw, atol=1e-6)
    bars = _chart(at, "es_probe_bars")["data"]
    assert [b["name"] for b in bars] == ["embedding", "after layer 2"]
    np.testing.assert_allclose(array(bars[0]["y"]), _relative(raw0), atol=1e-6)
    np.testing.assert_allclose(array(bars[1]["y"]), _relative(raw), atol=1e-6)
    assert "cosine − mean over the probes" in bars[1]["hovertemplate"]


def test_captions_state_the_shared_drift_and_the_largest_moves(river):
    trace, probes = river
    at = open_page("embedding_shift", s=RIVER, layer="2")
    raw0 = cosine(trace.hidden_ltd[0, 3], probes[0])
    raw = cosine(trace.hidden_ltd[3, 3], probes[3])
    # the raw cosines all rise together (measured mean 0.232 -> 0.384): the caption says so
    assert (raw > raw0).all() and raw.mean() - raw0.mean() > 0.1
    drift = f"their average goes from {raw0.mean():.3f} to {raw.mean():.3f}"
    assert any(drift in c.value and "minus its average" in c.value for c in at.caption)
    change = _relative(raw) - _relative(raw0)  # measured +0.039 +0.061 -0.067 -0.035
    assert PROBES[int(np.argmax(change))] == "stream" and PROBES[int(np.argmin(change))] == "money"
    summary = (
        f"From the embedding to after layer 2, “bank” moved most towards “stream” "
        f"({change.max():+.3f}) and most away from “money” ({change.min():+.3f})"
    )
    assert any(summary in m.value for m in at.markdown)


def test_one_numbering_for_learners_and_engineer_names_in_the_expander():
    at = open_page("embedding_shift", s=RIVER, layer="2")
    expander = at.expander[0]
    assert expander.label == "For engineers" and not expander.proto.expanded
    children = [at.main.children[i] for i in range(len(at.main.children))]
    after = children[children.index(expander) + 1 :]  # the end of the page: only the check
    assert [c.type for c in after] == ["subheader", "caption", "button"], after
    inside = " ".join(m.value for m in expander.markdown)
    assert "`hidden_ltd[0]`" in inside and "sidebar's layer 2 is `hidden_ltd[3]`" in inside
    assert "probe_cosines" in inside and "relative_lp" in inside
    learner = " ".join(_learner_text(at))
    for word in ("hidden_ltd", "block", "static (layer 0)", "layer 0 (", "L = ", "layers 0…6"):
        assert word not in learner, word
    assert "it opens after layer 2, the output of the sidebar's layer 2" in learner
    assert "from the embedding to after layer 5" in learner
    cells = at.dataframe[0].value.columns
    assert not any("block" in c or "static" in c for c in cells)


def test_plane_is_one_pca_over_every_state_of_tokens_and_probes(river):
    trace, probes = river
    at = open_page("embedding_shift", s=RIVER, layer="2")
    pca, tokens_lt2, probes_lp2 = fit_shift_plane(trace.hidden_ltd, np.arange(7), probes)
    fig = _chart(at, "es_plane")
    assert fig["data"][0]["name"] == "embedding"
    np.testing.assert_allclose(_xy(fig["data"][0]), tokens_lt2[0], atol=1e-4)  # embeddings
    np.testing.assert_allclose(_xy(fig["data"][1]), tokens_lt2[3], atol=1e-4)  # after layer 2
    np.testing.assert_allclose(_xy(fig["data"][2]), probes_lp2[3], atol=1e-4)
    assert "· after layer 2" in fig["data"][1]["hovertemplate"]
    assert [f["name"] for f in fig["frames"]] == STATES
    np.testing.assert_allclose(_xy(fig["frames"][6]["data"][0]), tokens_lt2[6], atol=1e-4)
    slider = fig["layout"]["sliders"][0]
    assert [s["label"] for s in slider["steps"]] == STATES and slider["active"] == 3
    assert fig["data"][1]["text"] == list(trace.tokens.tokens)
    ratio = pca.explained_ratio_c
    assert fig["layout"]["xaxis"]["title"]["text"] == f"PC1 ({ratio[0]:.0%} of variance)"
    line = _chart(at, "es_trajectory")["data"]
    np.testing.assert_allclose(_xy(line[0]), tokens_lt2[:, 3], atol=1e-4)
    assert line[0]["text"] == ["E", "0", "1", "2", "3", "4", "5"]
    assert line[0]["customdata"] == STATES
    assert line[1]["name"] == "probe words (after layer 2)"


def test_layer_and_token_choices_update_every_number(river):
    trace, probes = river
    at = open_page("embedding_shift", s=RIVER, layer="2")
    at.sidebar.slider(key="layer").set_value(5).run()
    at.selectbox(key="es_token").select(2).run()  # "river"
    assert not at.exception
    assert at.title[0].value == "Embedding shift · after layer 5"
    table = at.dataframe[0].value
    raw = cosine(trace.hidden_ltd[6, 2], probes[6])  # the sidebar's layer 5 -> hidden state 6
    np.testing.assert_allclose(table["raw cosine · after layer 5"], raw, atol=1e-6)
    np.testing.assert_allclose(table["relative · after layer 5"], _relative(raw), atol=1e-6)
    lines = _chart(at, "es_probe_lines")
    assert [t["name"] for t in lines["data"]] == PROBES
    expected_lp = cosine(trace.hidden_ltd[:, 2][:, None], probes)
    expected_lp = expected_lp - expected_lp.mean(axis=1, keepdims=True)
    for j, t in enumerate(lines["data"]):
        assert t["x"] == STATES
        np.testing.assert_allclose(array(t["y"]), expected_lp[:, j], atol=1e-6)
    assert lines["layout"]["yaxis"]["title"]["text"] == "cosine − mean over the probes"
    assert lines["layout"]["shapes"][0]["x0"] == 6  # the dotted line: after layer 5
    assert _chart(at, "es_plane")["layout"]["sliders"][0]["active"] == 6
    assert url_param(at, "es_token") == "2" and url_param(at, "layer") == "5"


def test_probes_from_the_url_with_bad_items_warn_and_are_dropped(model):
    long = "x" * 41
    at = open_page("embedding_shift", s=RIVER, es_probes=f"Money, , money, {long}", es_token="5")
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "empty" in warnings and "40 characters" in warnings and "repeated" in warnings
    table = at.dataframe[0].value
    assert list(table["probe"]) == ["Money"]
    trace = trace_sentence(model, RIVER)
    money = embed_words(model, ["Money"])
    np.testing.assert_allclose(
        table["raw cosine · embedding"], cosine(trace.hidden_ltd[0, 5], money[0]), atol=1e-6
    )
    np.testing.assert_array_equal(table["relative · embedding"], [0.0])  # one probe: always 0
    assert "With one probe" in at.info[0].value
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
    assert url_param(at, "es_probes") == plumbing
    at.text_input(key="s").input("Jane visits Africa")
    at.sidebar.button[0].click().run()  # the sentence form's Run
    assert at.text_input(key="es_probes").value == ", ".join(probes_for("Jane visits Africa"))
    at.text_input(key="es_probes").input("tea, coffee").run()
    at.text_input(key="s").input("The river bank was muddy")
    at.sidebar.button[0].click().run()
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
    raw0 = cosine(trace.hidden_ltd[0, token], embed_words(model, list(DEFAULT_PROBES))[0])
    np.testing.assert_allclose(table["raw cosine · embedding"], raw0, atol=1e-6)
    np.testing.assert_allclose(table["relative · embedding"], _relative(raw0), atol=1e-6)


def test_hidden_specials_leave_the_plane(river):
    at = open_page("embedding_shift", s=RIVER, hide_special="1")
    assert not at.exception
    texts = _chart(at, "es_plane")["data"][1]["text"]
    assert texts == ["the", "river", "bank", "was", "muddy"]
    options = at.selectbox(key="es_token").options
    assert not any("[CLS]" in o or "[SEP]" in o for o in options)


def test_the_bank_probes_survive_a_visit_to_another_page():
    """The probe box's state is dropped while another page shows and comes back as the URL
    default (river, water, ...): the river sentence must not get "river" as a probe then."""
    at = open_page("embedding_shift", s=RIVER)
    assert at.text_input(key="es_probes").value == ", ".join(BANK_PROBES)
    at.switch_page("pages/home.py").run()
    at.switch_page("pages/embedding_shift.py").run()
    assert not at.exception
    assert at.text_input(key="es_probes").value == ", ".join(BANK_PROBES)


def test_a_typed_sentence_is_never_probed_with_its_own_words():
    at = open_page("embedding_shift", s="We swam in the river at dawn")
    assert not at.exception
    probes = [p.strip() for p in at.text_input(key="es_probes").value.split(",")]
    assert probes == [p for p in DEFAULT_PROBES if p != "river"]
    assert list(at.dataframe[0].value["probe"]) == probes


def test_the_embedding_is_said_to_include_the_position(model):
    at = open_page("embedding_shift", s=RIVER)
    intro = at.caption[0].value
    assert model.config.positions == "learned"
    assert "plus a vector for its position" in intro and "whatever the sentence" not in intro


@pytest.mark.parametrize("model", ["minilm", "smollm2"])
def test_the_plane_caption_says_what_its_axes_hold(model):
    """When the first axis holds nearly all the spread (SmolLM2: the vectors move along one
    direction), the caption says the picture shows little else, not "a shadow of"."""
    from attention_core.lessons.shift_words import ONE_DIRECTION

    at = open_page("embedding_shift", model=model, s=RIVER)
    assert not at.exception
    fig = _chart(at, "es_plane")
    first = fig["layout"]["xaxis"]["title"]["text"]  # "PC1 (97% of variance)"
    share = float(first.split("(")[1].split("%")[0]) / 100
    said = " ".join(c.value for c in at.caption)
    if share >= ONE_DIRECTION + 0.005:
        assert f"Its first axis alone holds {share:.0%} of the vectors' spread" in said
        assert "a shadow of" not in said
    elif share < ONE_DIRECTION - 0.005:
        assert "a shadow of" in said and "first axis alone" not in said


def test_smollm2_s_last_state_is_named_after_the_final_rmsnorm():
    """SmolLM2's last hidden state is layer 29's output after the final RMSNorm (checked against
    transformers in tests/core/test_display.py): the page names it so wherever it shows it."""
    last = "after layer 29 and the final RMSNorm"
    at = open_page("embedding_shift", model="smollm2", s=RIVER, layer="29")
    assert not at.exception and not at.error
    learner = " ".join(_learner_text(at))
    assert f"“{last}” is what layer 29 hands on, rescaled by the model's final RMSNorm" in learner
    assert f"from the embedding to {last}" in learner and f"it opens {last}" in learner
    assert f"relative · {last}" in at.dataframe[0].value.columns
    slider = _chart(at, "es_plane")["layout"]["sliders"][0]["steps"]
    assert [s["label"] for s in slider[-2:]] == ["after layer 28", last]
    assert _chart(at, "es_probe_lines")["data"][0]["x"][-1] == last
    earlier = " ".join(
        _learner_text(open_page("embedding_shift", model="smollm2", s=RIVER, layer="28"))
    )
    assert "“after layer 28” is what layer 28 hands on." in earlier and "rescaled by" not in earlier
