"""The attention-pattern page against the engine: every stage, the switches, the arithmetic."""

import json

import numpy as np
import pytest

from attention_core import attention_steps, trace_sentence
from attention_core.methods.export import export_nbytes, plan
from attention_core.methods.roles import LABELS, article
from tests.app.conftest import explorer_report, open_page
from tests.roles_reference import reference_role

SENTENCE = "I made a deposit at the bank"


@pytest.fixture(scope="module")
def trace(model):
    return trace_sentence(model, SENTENCE)


def _explorer(at) -> dict:
    """The JSON the page hands the attention explorer (the browser draws from it)."""
    [element] = at.get("bidi_component")
    assert element.proto.component_name == "attention_explorer"
    return json.loads(element.proto.json)


def test_the_explorer_gets_the_sentence_and_the_view_from_the_link(trace):
    at = open_page("pattern", s=SENTENCE, layer="4", head="7", causal="1", temp="0.5", q="7")
    assert not at.exception
    assert at.title[0].value == "Attention pattern"
    assert not at.get("plotly_chart")  # the four stages are drawn in the browser
    data = _explorer(at)
    assert data["text"] == SENTENCE and data["model"] == "minilm"
    assert data["header"]["tokens"] == list(trace.tokens.tokens)
    assert data["header"]["special"] == trace.tokens.special_t.tolist()
    assert (data["header"]["n_layers"], data["header"]["n_heads"]) == (6, 12)
    assert data["header"]["d_head"] == 32 and data["header"]["n_tokens"] == trace.n_tokens
    assert data["view"] == {
        "layer": 4,
        "head": 7,
        "causal": True,
        "scale": True,
        "temp": 0.5,
        "transpose": False,
        "hide_special": False,
        "q": 7,
        "k": 0,
    }
    assert data["defaults"]["layer"] == 2 and data["defaults"]["temp"] == 1.0
    assert data["api"] == "api/attention/block"


def test_a_cell_outside_a_shorter_sentence_falls_back_inside_it():
    at = open_page("pattern", s="hi", q="9", k="9")
    assert not at.exception
    view = _explorer(at)["view"]
    assert (view["q"], view["k"]) == (2, 2)  # [CLS] hi [SEP]


def test_the_head_chosen_on_another_page_reaches_the_explorer():
    at = open_page("values", s=SENTENCE, layer="2")
    at.sidebar.slider(key="head").set_value(9).run()
    at.sidebar.toggle(key="hide_special").set_value(True).run()
    at.switch_page("pages/pattern.py").run()
    assert not at.exception
    view = _explorer(at)["view"]
    assert (view["layer"], view["head"], view["hide_special"]) == (2, 9, True)
    # Here the explorer holds layer, head and [CLS]/[SEP]: the sidebar names them, no sliders
    # (they would go stale while the explorer updates the session in a fragment rerun).
    assert not at.sidebar.slider and [t.key for t in at.sidebar.toggle] == ["s_page"]  # the box's
    assert "in the view on this page" in " ".join(c.value for c in at.sidebar.caption)


def test_the_number_table_follows_the_switches(trace):
    at = open_numbers(
        open_page("pattern", s=SENTENCE, layer="1", head="2", causal="1", scale="0", temp="2")
    )
    assert not at.exception
    expected = attention_steps(
        trace.scores_lhqk[1, 2], 32, scale=False, temperature=2.0, causal=True
    )
    np.testing.assert_allclose(at.dataframe[0].value.to_numpy(), expected.pattern, atol=1e-6)


def open_numbers(at):
    """Open the "pattern as numbers" expander, as a click on it does (it reruns the page)."""
    at.session_state["pattern_numbers"] = True
    return at.run()


def test_the_closed_number_expander_builds_and_sends_nothing(model):
    at = open_page("pattern", s=SENTENCE)
    assert [e.label for e in at.expander] == ["The pattern as numbers"]
    prepare = [b for b in at.button if b.label.startswith("Prepare")]
    assert not at.dataframe and not at.get("download_button") and not prepare
    open_numbers(at)
    assert not at.exception
    assert len(at.dataframe) == 1 and len(at.get("download_button")) == 4  # the stages' CSVs
    size = export_nbytes(plan(trace_sentence(model, SENTENCE))) / 2**20
    assert [b.label for b in at.button if b.label.startswith("Prepare")] == [
        f"Prepare All intermediates (.npz, {size:.1f} MB)"  # the file's size, before the click
    ]


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


def test_the_switches_are_called_what_ifs_and_temperature_is_explained(model, trace):
    """The page says what the model itself computes (÷√d_k, no mask on an encoder, temperature
    1) and what temperature does, and the direction it states holds on the page's head."""
    at = open_page("pattern", s=SENTENCE, layer="4", head="7")
    text = " ".join(c.value for c in at.caption)
    assert "**what-ifs**" in text
    assert f"√d_k = √32 = {32**0.5:.3f}" in text and "applies no mask" in text
    assert "never trained with the causal mask" in text
    assert "divides the scores before softmax: below 1 the pattern gets sharper" in text
    assert "not the temperature of text generation" in text  # the two told apart (issue 35)
    scores = trace.scores_lhqk[4, 7]
    peak = {t: attention_steps(scores, 32, temperature=t).pattern.max(axis=-1) for t in (0.5, 1, 2)}
    assert (peak[0.5] >= peak[1]).all() and (peak[1] >= peak[2]).all()  # sharper, flatter


def test_the_table_says_which_what_ifs_it_shows(trace):
    at = open_numbers(open_page("pattern", s=SENTENCE, layer="4", head="7"))
    assert any("The model's own weights (no what-if" in c.value for c in at.caption)
    at = open_numbers(open_page("pattern", s=SENTENCE, layer="4", head="7", temp="0.5", scale="0"))
    said = [c.value for c in at.caption if c.value.startswith("Layer 4, head 7")]
    assert said == [
        "Layer 4, head 7: rows are queries, columns are keys. What-if: no division by √d_k, "
        "temperature 0.5; the model's own weights differ."
    ]


def test_a_decoders_table_keeps_its_mask(smollm2):
    """SmolLM2 was trained with its mask: the switch is fixed on in the view, so the table must
    not show the weights without it (the session's what-if switch stays off)."""
    at = open_numbers(open_page("pattern", model="smollm2", s=SENTENCE, layer="3", head="1"))
    assert not at.exception
    text = " ".join(c.value for c in at.caption)
    assert "applies its causal mask (it was trained with it" in text
    expected = trace_sentence(smollm2, SENTENCE).pattern_lhqk[3, 1]
    table = at.dataframe[0].value.to_numpy()
    np.testing.assert_allclose(table, expected, atol=1e-6)
    assert (np.triu(table, 1) == 0).all()


REPEATED = "the dog saw the dog and the other dog saw the dog too"


def _job(at) -> tuple[str, str]:
    """The badge and the sentence of "What this head does"."""
    line = next(m.value for m in at.markdown if m.value.startswith("**What this head does**"))
    _, badge, words = line.split("`")
    return badge, words.strip()


def _assert_job(at, key: str, layer: int, head: int) -> None:
    badge, words = _job(at)
    assert words.startswith(f"Over the whole text, layer {layer}, head {head} is, by the rule, ")
    expected = reference_role(key, REPEATED, layer, head)
    if expected is None:
        return
    role, score = expected
    label, shown = badge.removeprefix("mixed: ").split(" · ")[0].rsplit(" ", 1)
    assert badge.startswith("mixed: ") == (role == "mixed")
    if role != "mixed":
        assert label == LABELS[role]
    if role not in ("mixed", "broad"):
        assert f"by the rule, {article(LABELS[role])} {LABELS[role]}" in words
    assert abs(float(shown) - score) <= 0.005 + 1e-5


@pytest.mark.parametrize(
    ("key", "layer", "head"), [("minilm", 0, 0), ("minilm", 3, 7), ("smollm2", 17, 3)]
)
def test_the_heads_job_is_named_by_the_rule_on_the_reference_scores(key, layer, head):
    at = open_page("pattern", s=REPEATED, model=key, layer=str(layer), head=str(head))
    assert not at.exception
    _assert_job(at, key, layer, head)
    assert _explorer(at)["header"]["roles"][layer][head] == _job(at)[0]  # the view's heading


def test_the_job_follows_the_head_the_explorer_moves_to():
    at = open_page("pattern", s=REPEATED, layer="1", head="2")
    view = _explorer(at)["view"] | {"layer": 4, "head": 9}
    explorer_report(at, "pattern_explorer", view)
    assert not at.exception
    _assert_job(at, "minilm", 4, 9)
