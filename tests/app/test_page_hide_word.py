"""The "What did that word do?" page against the engine: every number on it (summary, distance
chart, table, probe cosines, sentence embedding) equals
attention_core.methods.hide_word.hide_word's for
the default view and for one chosen by the URL; one case also against transformers run with
attention_mask 0; URL state; bad input gives a message, never an exception."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import embed_words, tokenize, trace_sentence
from attention_core.methods.hide_word import hide_word, word_pieces
from tests.app.conftest import open_page, url_param
from tests.figdata import array, spec
from ui.presets import BANK_PROBES, DEFAULT_PROBES
from viz.embedding_shift import layer_name

RIVER = "The river bank was muddy"  # [CLS] the river bank was muddy [SEP]
DEPOSIT = "I made a deposit at the bank"
STATES = [layer_name(i) for i in range(7)]


def _chart(at, key):
    return next(spec(c) for c in at.get("plotly_chart") if c.proto.id.endswith(f"-{key}"))


def _effect(model, text, word, token, probes=()):
    probes_lpd = embed_words(model, list(probes)) if probes else None
    return hide_word(model, text, word_pieces(tokenize(model, text), word), token, probes_lpd)


def _check_page(at, model, text, word, token, base, probes):
    """Every number the page shows against hide_word's."""
    assert not at.exception and not at.error
    effect = _effect(model, text, word, token, probes)
    other = _effect(model, text, base, token)
    after = at.session_state["layer"] + 1
    state = effect.most_changed
    cos, dist = effect.cosine_l[state], effect.distance_l[state]
    summary = at.markdown[0].value
    assert f"most {layer_name(state)}:" in summary
    assert f"cosine {cos:.3f}" in summary and f"lie {dist:.2f} apart" in summary
    assert f"{dist / effect.length_l[state]:.0%} of the vector's length" in summary
    # the other word at the same state (issue 35: not at its own most-changed one)
    cos2, dist2 = other.cosine_l[state], other.distance_l[state]
    assert f"instead, at the same point: cosine {cos2:.3f}, {dist2:.2f} apart" in summary
    if abs(dist2 - dist) > 0.005 * max(dist, dist2):
        assert ("farther" if dist2 > dist else "less far") in summary
    farther = other.distance_l[1:] > effect.distance_l[1:]
    assert f"Over all {farther.size} layers' outputs, hiding “{base}” moves it farther at " in (
        summary
    )
    assert f"moves it farther at {int(farther.sum())}." in summary
    # the probes: the drift they share, then the one that stands out beyond it (if any)
    change = effect.probe_pull_lp[after]
    said = next(m.value for m in at.markdown if "probe" in m.value and "on average" in m.value)
    mean = "about 0" if abs(change.mean()) < 0.0005 else f"{change.mean():+.3f}"
    assert f"by {mean} on average" in said or f"({mean} on " in said
    assert "-0.000" not in said
    beyond = change - change.mean()
    big = int(np.argmax(np.abs(beyond)))
    if abs(beyond[big]) >= 0.002:
        direction = "towards" if beyond[big] > 0 else "away from"
        assert f"“{probes[big]}” stands out, at {change[big]:+.3f}" in said
        assert f"{direction} it, compared with the other probes" in said
    else:
        assert "no probe stands out" in said
    bars = _chart(at, "hw_moved")["data"]
    assert [b["x"] for b in bars] == [STATES, STATES]
    np.testing.assert_allclose(array(bars[0]["y"]), effect.distance_l, atol=1e-9)
    np.testing.assert_allclose(array(bars[1]["y"]), other.distance_l, atol=1e-9)
    table = at.dataframe[0].value
    assert list(table["layer"]) == STATES
    np.testing.assert_allclose(table[f"cosine, {word} hidden"], effect.cosine_l, atol=1e-12)
    np.testing.assert_allclose(table[f"distance, {base} hidden"], other.distance_l, atol=1e-12)
    np.testing.assert_allclose(table[table.columns[-1]], effect.length_l, atol=1e-12)
    probe_table = at.dataframe[1].value
    assert list(probe_table["probe"]) == list(probes)
    np.testing.assert_allclose(probe_table["with"], effect.probe_cosine_with_lp[after], atol=1e-9)
    np.testing.assert_allclose(
        probe_table["hidden"], effect.probe_cosine_without_lp[after], atol=1e-9
    )
    np.testing.assert_allclose(probe_table["with − hidden"], effect.probe_pull_lp[after], atol=1e-9)
    probe_bars = _chart(at, "hw_probes_chart")["data"]
    np.testing.assert_allclose(
        array(probe_bars[1]["y"]), effect.probe_cosine_without_lp[after], atol=1e-9
    )
    assert [m.value for m in at.metric] == [
        f"{effect.sentence_cosine:.3f}",
        f"{other.sentence_cosine:.3f}",
    ]
    distances = [c.value for c in at.caption if c.value.startswith("Distance between the two")]
    assert [d.split(": ")[1][:5] for d in distances] == [
        f"{np.sqrt(2 - 2 * e.sentence_cosine):.3f}" for e in (effect, other)
    ]
    return effect


def test_default_hides_river_and_watches_bank(model):
    at = open_page("hide_word", s=RIVER)
    assert not at.warning
    assert at.title[0].value == "What did that word do?"
    assert at.selectbox(key="hw_word").value == "river"
    assert at.selectbox(key="hw_token").value == 3
    assert at.selectbox(key="hw_base").value == "was"  # the last little word
    assert at.text_input(key="hw_probes").value == ", ".join(BANK_PROBES)
    effect = _check_page(at, model, RIVER, "river", 3, "was", BANK_PROBES)
    assert effect.distance_l[0] == 0 and effect.distance_l[1:].min() > 2  # "river" matters
    assert effect.distance_l[1:].min() > _effect(model, RIVER, "was", 3).distance_l[1:].max()
    flat = {k: url_param(at, k) for k in at.query_params}
    assert (flat["hw_word"], flat["hw_token"], flat["hw_base"]) == ("river", "3", "was")
    assert not at.expander[0].proto.expanded  # "For engineers" starts closed
    assert at.expander[0].label == "For engineers"
    assert "tests/core/test_hide_word.py" in at.markdown[-1].value


def test_url_chosen_word_token_and_layer(model):
    at = open_page(
        "hide_word",
        s=DEPOSIT,
        layer="4",
        hw_word="made",
        hw_token="7",
        hw_base="the",
        hw_probes="money, shore",
    )
    assert not at.warning and not at.sidebar.warning
    assert at.selectbox(key="hw_word").value == "made"
    _check_page(at, model, DEPOSIT, "made", 7, "the", ("money", "shore"))
    flat = {k: url_param(at, k) for k in at.query_params}
    assert flat["hw_word"] == "made" and flat["hw_token"] == "7" and flat["layer"] == "4"
    assert flat["hw_probes"] == "money, shore"


def test_choosing_widgets_updates_numbers_and_url(model):
    at = open_page("hide_word", s=RIVER)
    at.selectbox(key="hw_word").select("muddy").run()
    at.selectbox(key="hw_base").select("the").run()
    _check_page(at, model, RIVER, "muddy", 3, "the", BANK_PROBES)
    assert url_param(at, "hw_word") == "muddy" and url_param(at, "hw_base") == "the"


def test_a_typed_sentence_gets_its_own_defaults(model):
    at = open_page("hide_word", s=RIVER)
    at.sidebar.text_input(key="s").input("the cat sat on the warm mat")
    at.sidebar.button[0].click().run()
    assert not at.exception
    # no preset: watch the last real word, hide the first content word, generic probes
    assert at.selectbox(key="hw_token").value == 7  # "mat"
    assert at.selectbox(key="hw_word").value == "cat"
    assert at.selectbox(key="hw_base").value == "on"  # the last little word
    assert at.text_input(key="hw_probes").value == ", ".join(DEFAULT_PROBES)
    assert "hw_probes" not in at.query_params  # the URL default is left out of the link
    _check_page(at, model, "the cat sat on the warm mat", "cat", 7, "on", DEFAULT_PROBES)


def test_hidden_pass_equals_transformers_with_attention_mask_zero(model):
    """The default view's distances against transformers' hidden states, run twice: all tokens
    visible, then attention_mask 0 at "river" (tests/core/test_hide_word.py's approach)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    hf = transformers.AutoModel.from_pretrained(str(model.path), attn_implementation="eager")
    ids = torch.from_numpy(trace_sentence(model, RIVER).tokens.input_ids_t)[None]
    states = []
    for mask in ([1] * 7, [1, 1, 0, 1, 1, 1, 1]):
        with torch.no_grad():
            out = hf.eval()(
                input_ids=ids, attention_mask=torch.tensor([mask]), output_hidden_states=True
            )
        states.append(np.stack([h[0, 3].double().numpy() for h in out.hidden_states]))
    at = open_page("hide_word", s=RIVER)
    table = at.dataframe[0].value
    theirs = np.linalg.norm(states[0] - states[1], axis=-1)
    np.testing.assert_allclose(table["distance, river hidden"], theirs, atol=2e-4)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"hw_word": "xyzzy"}, "“xyzzy” is not a word of this sentence; hiding “river” instead"),
        ({"hw_token": "99"}, "Token 99 is not one of the tokens shown; watching token 3"),
        ({"hw_base": "nope"}, None),  # a baseline that is no word: the default one, quietly
    ],
)
def test_bad_url_values_fall_back_with_a_message(query, message):
    at = open_page("hide_word", s=RIVER, **query)
    assert not at.exception
    assert at.selectbox(key="hw_word").value == "river" and at.selectbox(key="hw_token").value == 3
    assert at.selectbox(key="hw_base").value == "was"
    if message:
        assert message in at.warning[0].value
    assert _chart(at, "hw_moved")


def test_watching_the_hidden_word_is_refused():
    at = open_page("hide_word", s=RIVER, hw_word="bank", hw_token="3")
    assert not at.exception
    assert "You are watching “bank”, which is part of “bank”" in at.error[0].value
    assert not at.get("plotly_chart") and not at.metric


def test_one_word_sentence_and_empty_probes():
    at = open_page("hide_word", s="bank")
    assert not at.exception
    assert "only one word" in at.info[0].value and not at.get("plotly_chart")
    at = open_page("hide_word", s=RIVER, hw_probes=" , ")
    assert not at.exception
    assert any("at least one probe word" in i.value for i in at.info)
    assert len(at.get("plotly_chart")) == 1  # the distances; no probe chart


def test_user_text_stays_literal():
    at = open_page("hide_word", s="the *river* bank [x](y)", hw_word="*", hw_token="5")
    assert not at.exception
    assert at.markdown[0].value.startswith("Hiding “\\*” changes “bank” most")
    at = open_page("hide_word", s="the *river* bank [x](y)", hw_word="[", hw_token="5")
    assert at.markdown[0].value.startswith("Hiding “\\[” changes “bank” most")


def test_512_token_text_is_cut_with_a_message():
    text = "The river bank was muddy, and the bank by the river was closed. " * 60
    at = open_page("hide_word", s=text)
    assert not at.exception
    assert any("the text is cut after" in w.value for w in at.warning)
    assert at.dataframe[0].value.shape[0] == 7


def test_the_bank_probes_survive_a_visit_to_another_page():
    at = open_page("hide_word", s=RIVER)
    assert at.text_input(key="hw_probes").value == ", ".join(BANK_PROBES)
    at.switch_page("pages/values.py").run()
    at.switch_page("pages/hide_word.py").run()
    assert not at.exception
    assert at.text_input(key="hw_probes").value == ", ".join(BANK_PROBES)
    assert "river" not in at.text_input(key="hw_probes").value


def test_the_notes_are_named_without_a_source():
    at = open_page("hide_word", s=RIVER)
    assert "3Blue1Brown" not in at.caption[0].value and "The notes say" in at.caption[0].value


def test_a_decoder_page_names_no_sentence_embedding_in_its_engineers_notes():
    """SmolLM2 pools no sentence vector (transformers' LlamaForCausalLM has no pooler): the
    engineers' note does not describe one."""
    from tests.app.conftest import engineers_text
    from tests.core.oracles import oracle

    assert not hasattr(oracle("smollm2").model, "pooler")
    at = open_page("hide_word", model="smollm2", s="the cat sat on the mat because it was tired")
    assert not at.exception
    assert "sentence embedding" not in engineers_text(at)
    assert "hide_word.hide_word`." in engineers_text(at)


def test_smollm2_s_last_state_is_named_after_the_final_rmsnorm():
    """SmolLM2's last state has been through the final RMSNorm (tests/core/test_display.py):
    the table, the chart and the probe sentence say so, its capitals kept."""
    last = "after layer 29 and the final RMSNorm"
    at = open_page("hide_word", model="smollm2", s=RIVER, layer="29")
    assert not at.exception and not at.error
    assert list(at.dataframe[0].value["layer"])[-2:] == ["after layer 28", last]
    assert _chart(at, "hw_moved")["data"][0]["x"][-1] == last
    said = [m.value for m in at.markdown if "on average" in m.value]
    assert said and said[0].startswith("After layer 29 and the final RMSNorm, ")
