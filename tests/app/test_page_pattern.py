"""The attention-pattern page against the engine: every stage, the switches, the arithmetic."""

import numpy as np
import pytest

from attention_core import attention_steps, trace_sentence
from tests.app.conftest import open_page
from tests.figdata import array, spec

SENTENCE = "I made a deposit at the bank"


@pytest.fixture(scope="module")
def trace(model):
    return trace_sentence(model, SENTENCE)


def _z(at, i):
    return array(spec(at.get("plotly_chart")[i])["data"][0]["z"])


def test_defaults_show_the_four_stages_of_the_chosen_head(trace):
    at = open_page("pattern", s=SENTENCE, layer="4", head="7")
    assert not at.exception
    assert at.title[0].value == "Attention pattern · layer 4, head 7"
    steps = attention_steps(trace.scores_lhqk[4, 7], 32)
    assert len(at.get("plotly_chart")) == 4
    for i, stage in enumerate(("scores", "scaled", "masked", "pattern")):
        np.testing.assert_allclose(_z(at, i), getattr(steps, stage), atol=1e-6)
    np.testing.assert_allclose(_z(at, 3), trace.pattern_lhqk[4, 7], atol=1e-6)
    ticks = spec(at.get("plotly_chart")[3])["layout"]["xaxis"]["ticktext"]
    assert ticks == list(trace.tokens.tokens)
    # 9 tokens: the softmax pattern prints its numbers in the cells, the three stages before it
    # show theirs on hover (four heatmaps of labels were most of a redraw's time in the browser)
    printed = ["texttemplate" in spec(c)["data"][0] for c in at.get("plotly_chart")]
    assert printed == [False, False, False, True]


def test_switches_apply_live_to_the_cached_scores(trace):
    at = open_page("pattern", s=SENTENCE, layer="1", head="2")
    at.toggle(key="causal").set_value(True)
    at.toggle(key="scale").set_value(False)
    at.slider(key="temp").set_value(2.0).run()
    assert not at.exception
    expected = attention_steps(trace.scores_lhqk[1, 2], 32, scale=False, temperature=2.0,
                               causal=True)  # fmt: skip
    pattern = _z(at, 3)
    np.testing.assert_allclose(pattern, expected.pattern, atol=1e-6)
    assert np.all(pattern[np.triu_indices(len(pattern), 1)] == 0)
    masked = _z(at, 2)
    assert np.isnan(masked[np.triu_indices(len(masked), 1)]).all()
    assert at.query_params["causal"] == ["1"] or at.query_params["causal"] == "1"


def test_cell_arithmetic_matches_the_dot_product(trace):
    at = open_page("pattern", s=SENTENCE, layer="0", head="3", q="7", k="2")
    text = " ".join(m.value for m in at.markdown)
    score = float(trace.q_lhqe[0, 3, 7] @ trace.k_lhke[0, 3, 2])
    assert f"{score:.4f}" in text
    assert f"{trace.pattern_lhqk[0, 3, 7, 2]:.4f}" in text


def test_hiding_special_tokens_drops_their_rows_and_columns(trace):
    at = open_page("pattern", s=SENTENCE, hide_special="1")
    z = _z(at, 3)
    assert z.shape == (trace.n_tokens - 2, trace.n_tokens - 2)
    ticks = spec(at.get("plotly_chart")[3])["layout"]["xaxis"]["ticktext"]
    assert "[CLS]" not in ticks and "[SEP]" not in ticks


def test_transpose_puts_queries_on_columns(trace):
    at = open_page("pattern", s=SENTENCE, transpose="1")
    np.testing.assert_allclose(_z(at, 3), trace.pattern_lhqk[2, 0].T, atol=1e-6)


def open_numbers(at):
    """Open the "pattern as numbers" expander, as a click on it does (it reruns the page)."""
    at.session_state["pattern_numbers"] = True
    return at.run()


def test_the_closed_number_expander_builds_and_sends_nothing():
    at = open_page("pattern", s=SENTENCE)
    assert [e.label for e in at.expander] == ["The pattern as numbers"]
    assert not at.dataframe and not at.get("download_button")
    open_numbers(at)
    assert not at.exception
    assert len(at.dataframe) == 1 and len(at.get("download_button")) == 5


def test_the_number_table_keeps_repeated_tokens_apart(model):
    sentence = "the cat saw the dog and the bird saw the cat"
    at = open_numbers(open_page("pattern", s=sentence, layer="3", head="5"))
    expected = trace_sentence(model, sentence).pattern_lhqk[3, 5]
    table = at.dataframe[0].value
    assert table.shape == expected.shape  # one column per token, "the" four times included
    assert table.columns.is_unique and list(table.index) == list(table.columns)
    assert table.columns[1] == "1:the" and table.columns[4] == "4:the"
    np.testing.assert_allclose(table.to_numpy(), expected, atol=1e-6)


def test_a_long_sentence_builds_its_number_table_only_when_asked(model):
    sentence = " ".join(["word"] * 80)
    at = open_numbers(open_page("pattern", s=sentence))
    assert not at.exception and not at.dataframe  # 82×82 is not sent unless asked for
    at.toggle(key="pattern_big_table").set_value(True).run()
    assert not at.exception
    assert at.dataframe[0].value.shape == (82, 82)
