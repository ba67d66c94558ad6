"""Beyond the weights against the engine: the sink sentence (attention_core.methods.weight_effect),
the explorers' stages, the knock-out (attention_core.methods.knockout: a knocked pass run here), the
importance sweep and its ranking, the logit lens; both models; bad input gives a message."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from attention_core import WhatIf, default_token, trace_sentence
from attention_core.core.pieces import show_piece
from attention_core.methods.knockout import head_importance, prediction_change, vector_change
from attention_core.methods.logit_lens import logit_lens
from attention_core.methods.weight_effect import head_effect, largest_gap
from tests.app.conftest import open_page, url_param
from tests.figdata import array, spec
from ui import safe
from ui.beyond.sweep import SWEEP_MAX_TOKENS

RIVER = "The river bank was muddy"
SHORT = "Jane visits Africa"


def _open(text=RIVER, **params):
    at = open_page("beyond", s=text, **params)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _said(effect, trace):
    word = safe.token(trace.tokens.tokens[effect.key])
    return (
        f"{word} gets **{effect.weight_share:.0%}** of the weight but passes on only "
        f"**{effect.moved_share:.0%}**"
    )


def _explorers(at):
    return {
        e.proto.id.rsplit("-", 1)[-1]: json.loads(e.proto.json) for e in at.get("bidi_component")
    }


def _piece(m, token_id):
    return show_piece(m.tokenizer.id_to_token(int(token_id)))


def _words(at):
    return " ".join(m.value for m in at.markdown)


def test_minilm_sink_explorers_and_knock_out_equal_the_engine(model):
    at = _open()
    trace = trace_sentence(model, RIVER)
    layer, head = at.session_state["layer"], at.session_state["head"]
    words = _words(at)
    here, best = head_effect(trace, layer, head), largest_gap(trace)
    assert f"In layer {layer}, head {head}, " + _said(here, trace) in words
    assert f"is layer {best.layer}, head {best.head}: " + _said(best, trace) in words
    assert best.key == 0 and best.weight_share - best.moved_share > 0.7  # [CLS]: 89% vs 10%
    explorers = _explorers(at)
    assert explorers["bey_weighted"]["stages"] == ["pattern", "weighted"]
    assert explorers["bey_rollout"]["stages"] == ["rollout"]
    assert explorers["bey_rollout"]["controls"] == ["layer"]
    # the knock-out: the sidebar's head, watched on the last real word
    token = default_token(trace.tokens.tokens, trace.tokens.special_t)
    assert at.session_state["bey_token"] == token
    knocked = trace_sentence(model, RIVER, WhatIf(knocked=((layer, head),)))
    change = vector_change(trace, knocked, token)
    table = at.dataframe[0].value
    np.testing.assert_allclose(table["cosine"], change.cosine_l, atol=1e-12)
    np.testing.assert_allclose(table["distance"], change.distance_l, atol=1e-12)
    chart = next(c for c in at.get("plotly_chart") if c.proto.id.endswith("-bey_cosine"))
    np.testing.assert_allclose(array(spec(chart)["data"][0]["y"]), change.cosine_l, atol=1e-12)
    assert at.metric[0].value == f"{change.sentence_cosine:.4f}"
    assert f"cosine **{change.cosine_l[-1]:.4f}**" in words
    assert any("applies to a model that predicts words" in i.value for i in at.info)
    assert [box.label for box in at.expander] == ["For engineers"]
    assert not at.expander[0].proto.expanded


def test_minilm_several_heads_and_the_sweep_and_its_row(model):
    at = _open()
    at.multiselect(key="bey_heads").set_value(["0.1", "3.7"])
    at.selectbox(key="bey_token").set_value(2)
    at.run()
    trace = trace_sentence(model, RIVER)
    change = vector_change(trace, trace_sentence(model, RIVER, WhatIf(knocked=((0, 1), (3, 7)))), 2)
    np.testing.assert_allclose(at.dataframe[0].value["cosine"], change.cosine_l, atol=1e-12)
    at.button(key="bey_sweep").click().run()
    assert not at.exception
    ranked = head_importance(model, trace, 2).ranked()
    table = at.dataframe[1].value
    assert list(zip(table["layer"], table["head"], strict=True)) == [r[:2] for r in ranked]
    np.testing.assert_allclose(table["effect"], [e for _, _, e in ranked], atol=1e-9)
    assert at.session_state["_bey_ranked"][0] == f"{ranked[0][0]}.{ranked[0][1]}"


def test_smollm2_prediction_lens_and_sweep_equal_the_engine(smollm2):
    at = _open(SHORT, model="smollm2")
    trace = trace_sentence(smollm2, SHORT)
    last = trace.n_tokens - 1
    assert at.session_state["bey_token"] == last
    layer, head = at.session_state["layer"], at.session_state["head"]
    knocked = trace_sentence(smollm2, SHORT, WhatIf(knocked=((layer, head),)))
    change = prediction_change(trace, knocked, last)
    table = at.dataframe[0].value
    assert list(table["with every head"]) == [_piece(smollm2, i) for i in change.before_ids]
    assert list(table["without those heads"]) == [_piece(smollm2, i) for i in change.after_ids]
    np.testing.assert_allclose(table["p with"], change.before_probs, atol=1e-7)
    np.testing.assert_allclose(table["p without"], change.after_probs, atol=1e-7)
    lost = safe.token(_piece(smollm2, change.lost_id))
    assert f"Lost most: {lost}, {change.lost[0]:.2%} → {change.lost[1]:.2%}" in _words(at)
    lens = logit_lens(trace)
    grid = at.dataframe[1].value
    assert isinstance(grid, pd.DataFrame) and grid.shape == (30, trace.n_tokens)
    assert grid.index[-1] == "after layer 29 = the model's prediction"
    for layer_i in (0, 14, 29):
        for p in range(trace.n_tokens):
            word = _piece(smollm2, lens.top_ids_lpk[layer_i, p, 0])
            assert grid.iloc[layer_i, p] == f"{word} {lens.top_probs_lpk[layer_i, p, 0]:.2f}"
    np.testing.assert_array_equal(lens.top_ids_lpk[-1, :, 0], trace.next_top_ids_tk[:, 0])
    at.button(key="bey_sweep").click().run()
    assert not at.exception
    ranked = head_importance(smollm2, trace, last).ranked()
    rank = at.dataframe[1].value
    assert list(zip(rank["layer"], rank["head"], strict=True)) == [r[:2] for r in ranked]
    np.testing.assert_allclose(rank["effect"], [e for _, _, e in ranked], atol=1e-6)


def test_long_sentences_window_the_lens_and_stop_the_sweep(smollm2):
    text = " ".join(["the cat sat on the mat"] * 14)  # > 64 tokens
    at = _open(text, model="smollm2")
    trace = trace_sentence(smollm2, text)
    assert trace.n_tokens > SWEEP_MAX_TOKENS
    assert not _has(at, "bey_sweep")
    assert any(f"runs up to {SWEEP_MAX_TOKENS}" in w.value for w in at.warning)
    grid = at.dataframe[1].value
    assert grid.shape == (30, 16)
    last = trace.n_tokens - 1
    assert list(grid.columns)[-1] == f"{last}: {trace.tokens.tokens[last]}"
    at.selectbox(key="bey_token").set_value(10).run()
    assert not at.exception and _has(at, "bey_sweep")  # 11 tokens read: the sweep may run
    assert at.dataframe[1].value.columns[0].startswith("2: ")  # 10 - 8


def _has(at, key):
    return any(b.key == key for b in at.button)


def test_switching_model_drops_heads_the_new_model_lacks():
    at = _open(SHORT, model="smollm2")
    at.multiselect(key="bey_heads").set_value(["29.8", "0.0"]).run()
    assert not at.exception
    at.selectbox(key="model").set_value("minilm").run()
    assert not at.exception and at.session_state["bey_heads"] == ["0.0"]
    at.multiselect(key="bey_heads").set_value([]).run()
    assert any("Choose at least one head" in i.value for i in at.info)
    at.button(key="bey_switch").click().run()
    assert not at.exception and at.session_state["model"] == "smollm2"


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "Type a sentence"), ("\u200b\u200b", "reads no word")],
)
def test_bad_input_gives_a_message(text, message):
    at = open_page("beyond", s=text)
    assert not at.exception
    assert any(message in i.value for i in at.info)


def test_typed_markup_is_shown_as_text():
    at = _open("<b>bold</b> *star* [link](x)")
    for m in at.markdown:
        assert "<b>" not in m.value and "](x)" not in m.value


def test_a_link_opens_its_knocked_heads_and_token_and_the_url_keeps_them(model):
    at = _open(knock="3.7,0.1", bey_token="2")
    trace = trace_sentence(model, RIVER)
    assert at.session_state["bey_heads"] == ["0.1", "3.7"]
    assert at.session_state["bey_token"] == 2
    knocked = trace_sentence(model, RIVER, WhatIf(knocked=((0, 1), (3, 7))))
    change = vector_change(trace, knocked, 2)
    np.testing.assert_allclose(at.dataframe[0].value["cosine"], change.cosine_l, atol=1e-12)
    assert url_param(at, "knock") == "0.1,3.7" and url_param(at, "bey_token") == "2"
    at.multiselect(key="bey_heads").set_value(["5.11"]).run()
    assert url_param(at, "knock") == "5.11"


@pytest.mark.parametrize("raw", ["9.0", "1.12", "x", "1.2.3"])
def test_a_link_with_heads_the_model_lacks_warns_and_opens_the_sidebar_head(raw):
    at = open_page("beyond", s=RIVER, knock=raw)
    assert not at.exception
    assert any("knock" in w.value for w in at.warning)
    layer, head = at.session_state["layer"], at.session_state["head"]
    assert at.session_state["bey_heads"] == [f"{layer}.{head}"]


@pytest.mark.parametrize("model", ["minilm", "smollm2"])
def test_the_sink_caption_names_only_tokens_the_model_has(model):
    """[CLS]/[SEP] are named only where transformers' tokenizer puts them; SmolLM2's first token
    is the text's own first word."""
    from tests.core.oracles import oracle

    text = "the river bank was muddy"
    tokenizer = oracle(model).tokenizer
    ids = oracle(model).ids(text)
    at = open_page("beyond", model=model, s=text)
    assert not at.exception
    [said] = [c.value for c in at.caption if c.value.startswith("Shares are summed")]
    if ids[0] == tokenizer.cls_token_id:
        assert "[CLS] or [SEP]" in said
    else:
        assert not set(ids) & set(tokenizer.all_special_ids)
        assert "[CLS]" not in said and "the first token, whatever word it is" in said
