"""The Inside a decoder page: SmolLM2's own numbers on screen (the sidebar shows SmolLM2 there,
whatever the link said) on the sidebar's layer and head, the notes' table on the head its rule
picks, a bad sentence answered with a message."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import load_model, trace_sentence
from attention_core.methods.decoder_heads import NOTE_PHRASE, NOTE_TABLE_QK, note_tables, pick_head
from tests.app.conftest import open_page
from tests.figdata import array, spec

SENTENCE = "The river bank was muddy after the rain"


@pytest.fixture(scope="module")
def smollm2():
    return load_model("smollm2")


def _charts(at) -> dict[str, dict]:
    return {c.proto.id.rsplit("-", 1)[-1]: spec(c) for c in at.get("plotly_chart")}


def test_the_page_shows_the_decoders_own_numbers(smollm2):
    at = open_page("decoder", s=SENTENCE, model="minilm")
    assert not at.exception
    trace = trace_sentence(smollm2, SENTENCE)
    assert at.selectbox(key="model").value == "smollm2"
    layer, head = at.slider(key="layer").value, at.slider(key="head").value  # the sidebar's
    charts = _charts(at)
    z = array(charts["dec_pattern"]["data"][0]["z"])
    np.testing.assert_array_equal(z, trace.pattern_lhqk[layer, head])
    assert (z[np.triu_indices(trace.n_tokens, 1)] == 0).all()
    captions = " ".join(c.value for c in at.caption)
    # RoPE makes the position's part of a score relative, not the whole score (issue 35)
    assert "the position's part of a score depends on how far apart" in captions
    table = at.dataframe[-1].value  # groups, overlap, next-token guesses
    assert table["token"].tolist() == list(trace.tokens.tokens)
    np.testing.assert_array_equal(table["p1"].to_numpy(np.float32), trace.next_top_probs_tk[:, 0])
    assert table["guess 1"].iloc[3] == smollm2.tokenizer.id_to_token(
        int(trace.next_top_ids_tk[3, 0])
    ).replace("Ġ", "▁")


def test_the_notes_table_follows_its_rule(smollm2):
    at = open_page("decoder", s=SENTENCE)
    tables = note_tables(trace_sentence(smollm2, NOTE_PHRASE))
    for rule in ("closest", "adjective"):
        at.radio(key="dec_rule").set_value(rule).run()
        assert not at.exception
        pick = pick_head(tables, rule)
        charts = _charts(at)
        shown = array(charts["dec_note_model"]["data"][0]["z"])
        np.testing.assert_allclose(shown, tables[pick.layer, pick.head].T)
        assert (
            f"layer {pick.layer}, head {pick.head}"
            in charts["dec_note_model"]["layout"]["title"]["text"]
        )
        np.testing.assert_allclose(array(charts["dec_note_own"]["data"][0]["z"]), NOTE_TABLE_QK.T)
        said = next(m.value for m in at.markdown if m.value.startswith("In this head"))
        assert f"**{tables[pick.layer, pick.head, 2, 1]:.3f}** to “quantum”" in said
        # the comparison is the head's own, measured (issue 35: not a note printed for any head)
        apart = np.abs(tables[pick.layer, pick.head, 2] - NOTE_TABLE_QK[2]).sum()
        assert f"a difference of **{apart:.3f}** on this row" in said
        if pick.rule == "closest":  # the rule's own figure says what it sums over
            total = np.abs(tables[pick.layer, pick.head] - NOTE_TABLE_QK).sum()
            rule = next(c.value for c in at.caption if c.value.startswith("Rule: the head"))
            assert f"This one: total difference over the six cells {total:.3f}." in rule
        assert "Where it differs" not in said and "find nothing to look for" not in said


def test_the_sidebars_layer_and_head_sliders(smollm2):
    at = open_page("decoder", s=SENTENCE)
    at.slider(key="layer").set_value(29).run()
    at.slider(key="head").set_value(8).run()
    assert not at.exception
    trace = trace_sentence(smollm2, SENTENCE)
    z = array(_charts(at)["dec_pattern"]["data"][0]["z"])
    np.testing.assert_array_equal(z, trace.pattern_lhqk[29, 8])
    head = _charts(at)["dec_pos_head"]["data"][0]
    assert head["name"] == "layer 29, head 8"


def test_a_blank_sentence_gives_a_message():
    at = open_page("decoder", s=SENTENCE)
    at.text_input(key="s").input("   ")
    at.button[0].click().run()
    assert not at.exception
    assert any("Type a sentence" in i.value for i in at.info)
