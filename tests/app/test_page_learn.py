"""The guided tour against the engine: every step, its numbers, its navigation, its URL state."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attention_core import (
    COST_SIZES,
    attention_bytes,
    attention_steps,
    cosine,
    row_entropy_bits,
    run_decoder,
    tokenize,
    trace_sentence,
)
from tests.app.conftest import open_page
from tests.figdata import array, spec
from ui.learn_steps import BANK_A, BANK_B, STEPS
from ui.learn_text import N_STEPS, TITLES
from ui.presets import PRESETS

SENTENCE = "the cat saw the dog near the bank"  # "the" repeats; "bank" is token 8
LAYER, HEAD, TOKEN = 2, 5, 8
HEADS = tuple(f"learn_heads_{slot}" for slot in range(4))  # step 8: four heads side by side
EXPLORERS = {4: ("learn_scores",), 5: ("learn_masked",), 6: ("learn_pattern",), 8: HEADS}
OFF = {"causal": False, "scale": True, "temp": 1.0, "transpose": False, "q": -1, "k": -1}
VIEW = {"layer": LAYER, "head": HEAD, "hide_special": False} | OFF  # the sidebar's, switches off


@pytest.fixture(scope="module")
def trace(model):
    return trace_sentence(model, SENTENCE)


def _open(step: int, s: str = SENTENCE, **params: str):
    at = open_page("learn", s=s, step=str(step), layer=str(LAYER), head=str(HEAD), **params)
    assert not at.exception, [e.value for e in at.exception]
    return at


def _key(element) -> str:
    """The key an element was drawn with (its id ends with it)."""
    return element.proto.id.rsplit("-", 1)[-1]


def _chart(at, which: int | str):
    """A Plotly chart of the page, by position or by key."""
    charts = at.get("plotly_chart")
    if isinstance(which, int):
        return charts[which]
    [chart] = [c for c in charts if _key(c) == which]
    return chart


def _z(at, which: int | str) -> np.ndarray:
    return array(spec(_chart(at, which))["data"][0]["z"])


def _explorers(at) -> dict[str, dict]:
    """The JSON each attention explorer of the page gets (the browser draws from it), by key."""
    found = {}
    for element in at.get("bidi_component"):
        assert element.proto.component_name == "attention_explorer"
        found[_key(element)] = json.loads(element.proto.json)
    return found


def _explorer(at, key: str, trace, text: str = SENTENCE) -> dict:
    """The explorer mounted as ``key``, checked to hold the engine's sentence: the browser
    computes its stages from this trace's raw scores."""
    data = _explorers(at)[key]
    assert data["text"] == text and data["model"] == "all-MiniLM-L6-v2"
    assert data["header"] == {
        "tokens": list(trace.tokens.tokens), "special": trace.tokens.special_t.tolist(),
        "n_layers": 6, "n_heads": 12, "d_head": 32, "n_tokens": trace.n_tokens,
    }  # fmt: skip
    return data


def _words(at) -> str:
    return " ".join([m.value for m in at.markdown] + [x.value for x in at.latex])


def _metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(label))


@pytest.mark.parametrize("step", range(1, N_STEPS + 1))
def test_every_step_renders_on_a_custom_sentence(step):
    at = _open(step)
    assert at.title[0].value == "Learn step by step"
    assert at.header[0].value == f"{step}. {TITLES[step - 1]}"
    progress = at.get("progress")[0].proto
    assert progress.text == f"Step {step} of {N_STEPS}"
    assert progress.value == int(100 * step / N_STEPS)  # Streamlit truncates to whole percent
    explorers = _explorers(at)
    assert sorted(explorers) == sorted(EXPLORERS.get(step, ()))
    assert at.get("plotly_chart") or at.dataframe or explorers, "every step has a live figure"
    assert at.latex, "every step has a formula"
    link = at.get("page_link")[0].proto
    assert link.page == STEPS[step - 1][1] and link.label.startswith("Explore further")
    assert at.button(key="learn_prev").disabled == (step == 1)
    assert at.button(key="learn_next").disabled == (step == N_STEPS)


def test_step1_same_word_same_static_vector(model, trace):
    at = _open(1)
    a, b = trace_sentence(model, BANK_A), trace_sentence(model, BANK_B)
    ia, ib = a.tokens.tokens.index("bank"), b.tokens.tokens.index("bank")
    assert _metric(at, "“bank”: cosine of the static") == "1.0000"
    after = cosine(a.hidden_ltd[-1, ia], b.hidden_ltd[-1, ib])
    assert _metric(at, "“bank”: cosine after") == f"{after:.4f}"
    assert after < 0.99  # the contextual vectors really differ
    text = _words(at)
    assert "positions 1 and 4: static cosine **1.0000**" in text  # "the" repeats in SENTENCE
    assert f"{cosine(trace.hidden_ltd[-1, 1], trace.hidden_ltd[-1, 4]):.4f}" in text
    np.testing.assert_array_equal(_z(at, 0), trace.word_td)


def test_step2_positions_are_the_models_and_the_sine_waves(trace):
    at = _open(2)
    np.testing.assert_allclose(_z(at, 0), trace.position_td, atol=1e-7)
    assert f"= {np.sin(1.0):.4f}" in _words(at)
    assert _z(at, 1)[0, 1] == pytest.approx(1.0)  # cos(0) in the first position's dimension 1


def test_step3_query_recomputed_from_weights_matches_the_pass(trace):
    at = _open(3, learn_token=str(TOKEN))
    q = trace.q_lhqe[LAYER, HEAD]
    np.testing.assert_allclose(_z(at, 0), q[:, :8], atol=1e-6)
    np.testing.assert_allclose(_z(at, 1), trace.k_lhke[LAYER, HEAD][:, :8], atol=1e-6)
    value = f"{q[TOKEN, 0]:.4f}"
    assert f"= {value}" in " ".join(x.value for x in at.latex)
    assert f"q = **{value}**" in _words(at)


def test_step4_scaling_numbers_and_saturation(trace):
    at = _open(4, learn_token=str(TOKEN))
    scaled = attention_steps(trace.scores_lhqk[LAYER, HEAD], 32)
    raw = attention_steps(trace.scores_lhqk[LAYER, HEAD], 32, scale=False)
    data = _explorer(at, "learn_scores", trace)
    assert data["stages"] == ["scores", "scaled"] and data["controls"] == ["layer", "head"]
    assert data["view"] == VIEW
    assert (
        _metric(at, "mean row entropy, ÷√d_k") == f"{row_entropy_bits(scaled.pattern).mean():.3f}"
    )
    assert _metric(at, "… without scaling (bits)") == f"{row_entropy_bits(raw.pattern).mean():.3f}"
    assert _metric(at, "mean largest weight, ÷√d_k") == f"{scaled.pattern.max(axis=1).mean():.3f}"
    largest = [m.value for m in at.metric if m.label == "… without scaling"]
    assert largest == [f"{raw.pattern.max(axis=1).mean():.3f}"]
    j = int(np.argmax(scaled.pattern[TOKEN]))
    assert f"= {scaled.scores[TOKEN, j]:.4f}" in _words(at)
    assert f"{scaled.scaled[TOKEN, j]:.4f}" in _words(at)
    saturation = spec(_chart(at, "learn_saturation"))["data"]
    assert {t["name"] for t in saturation} == {"with ÷√d_k", "without scaling"}


def test_step5_causal_and_padding_masks(trace):
    at = _open(5, learn_token="3")
    data = _explorer(at, "learn_masked", trace)  # the browser sets −∞ above the diagonal
    assert data["stages"] == ["masked", "pattern"] and data["controls"] == ["layer", "head"]
    assert data["view"] == VIEW | {"causal": True}
    n = trace.n_tokens
    causal = attention_steps(trace.scores_lhqk[LAYER, HEAD], 32, causal=True).pattern
    assert np.all(causal[np.triu_indices(n, 1)] == 0)
    np.testing.assert_allclose(causal.sum(axis=1), 1.0, atol=1e-5)
    later = trace.pattern_lhqk[LAYER, HEAD, 3, 4:].sum()
    text = _words(at)
    assert f"gave **{later:.4f}** of its attention to later tokens; with it, **0.0000**" in text
    assert "Largest weight above the diagonal: **0.0000**" in text
    assert rf"{later:.4f} \to 0.0000" in text and r"a_{3,j} = 1.0000" in text
    padded = _z(at, "learn_pad_masked")
    assert padded.shape == (n + 3, n + 3)
    assert np.all(padded[:n, n:] == 0)
    np.testing.assert_allclose(padded[:n, :n], trace.pattern_lhqk[0, HEAD], atol=1e-6)
    assert _metric(at, "weight on [PAD], with the mask") == "0.0000"
    assert float(_metric(at, "weight on [PAD], no mask")) > 0
    assert float(_metric(at, "largest change")) < 1e-6


def test_step6_rows_sum_to_one_and_top_keys_match(trace):
    at = _open(6, learn_token=str(TOKEN))
    pattern = trace.pattern_lhqk[LAYER, HEAD]
    data = _explorer(at, "learn_pattern", trace)
    assert data["stages"] == ["pattern"] and data["controls"] == ["layer", "head"]
    assert data["view"] == VIEW
    table = at.dataframe[0].value
    assert len(table) == trace.n_tokens
    np.testing.assert_allclose(table["row sum"], 1.0, atol=1e-6)
    np.testing.assert_allclose(table["share 1"], pattern.max(axis=1), atol=1e-6)
    assert (table["share 1"] >= table["share 2"]).all() and (
        table["share 2"] >= table["share 3"]
    ).all()
    best = int(np.argmax(pattern[TOKEN]))
    assert table["1st"][TOKEN] == f"{best}: {trace.tokens.tokens[best]}"
    assert f"= {pattern[TOKEN, best]:.4f}" in _words(at)


def test_step7_weighted_sum_and_update(trace):
    at = _open(7, learn_token=str(TOKEN))
    bars = array(spec(at.get("plotly_chart")[0])["data"][0]["y"])
    np.testing.assert_allclose(bars, trace.pattern_lhqk[LAYER, HEAD, TOKEN], atol=1e-6)
    text = _words(at)
    assert f"\\|z_{{{TOKEN}}}\\| = {np.linalg.norm(trace.z_lhqe[LAYER, HEAD, TOKEN]):.4f}" in text
    assert f"= {np.linalg.norm(trace.delta_ltd[LAYER, TOKEN]):.4f}" in text
    strips = _z(at, 1)
    e = trace.hidden_ltd[LAYER, TOKEN]
    np.testing.assert_allclose(strips, [e, trace.delta_ltd[LAYER, TOKEN],
                                        e + trace.delta_ltd[LAYER, TOKEN]], atol=1e-5)  # fmt: skip


def test_step8_heads_side_by_side_and_their_sum(trace):
    at = _open(8, learn_token=str(TOKEN))
    for slot, key in enumerate(HEADS):  # each its own head, fixed: no controls
        data = _explorer(at, key, trace)
        assert data["stages"] == ["pattern"] and data["controls"] == []
        assert data["view"] == VIEW | {"head": (HEAD + slot) % 12}
    assert [_explorers(at)[key]["view"]["head"] for key in HEADS] == [5, 6, 7, 8]
    wrapped = open_page("learn", s=SENTENCE, step="8", layer=str(LAYER), head="10")
    assert [_explorers(wrapped)[key]["view"]["head"] for key in HEADS] == [10, 11, 0, 1]
    norms = array(spec(_chart(at, "learn_head_norms"))["data"][0]["y"])
    np.testing.assert_allclose(
        norms, np.linalg.norm(trace.head_delta_lhtd[LAYER, :, TOKEN], axis=-1), rtol=1e-5
    )
    assert float(_metric(at, "largest difference")) < 1e-5


def test_step9_one_token_through_the_block(trace):
    at = _open(9, learn_token=str(TOKEN))
    norms = array(spec(at.get("plotly_chart")[0])["data"][0]["y"])
    h, d = trace.hidden_ltd[:, TOKEN], trace.delta_ltd[LAYER, TOKEN]
    a, f = trace.attn_out_ltd[LAYER, TOKEN], trace.ffn_out_ltd[LAYER, TOKEN]
    expected = [h[LAYER], h[LAYER] + d, a, f, a + f, h[LAYER + 1]]
    np.testing.assert_allclose(norms, np.linalg.norm(expected, axis=-1), rtol=1e-5)
    stack = at.dataframe[0].value
    np.testing.assert_allclose(stack["‖h‖"], np.linalg.norm(h, axis=-1), rtol=1e-5)
    active = int((trace.ffn_hidden_ltf[LAYER, TOKEN] > 0).sum())
    assert f"{active} \\text{{ of }} 1536" in _words(at)


def test_step10_custom_source_and_target(model):
    src, tgt = "Jane visits Africa", "she travels to a far continent"
    at = _open(10, learn_src=src, learn_tgt=tgt)
    dec = run_decoder(model, tokenize(model, src), tokenize(model, tgt), LAYER)
    self_p, cross_p = _z(at, 0), _z(at, 1)
    m, n = len(dec.target), len(dec.source)
    assert cross_p.shape == (m, n) and m != n
    np.testing.assert_allclose(cross_p, dec.cross.pattern_hqk[HEAD], atol=1e-6)
    np.testing.assert_allclose(self_p, dec.self_attn.pattern_hqk[HEAD], atol=1e-6)
    assert np.all(self_p[np.triu_indices(m, 1)] == 0)
    assert _metric(at, "largest self-attention weight above") == "0.0000"
    assert _metric(at, "cross-attention row sums, smallest") == "1.000000"
    table = at.dataframe[0].value
    assert list(table["target token"]) == [f"{i}: {t}" for i, t in enumerate(dec.target.tokens)]
    assert "encoder only" in at.info[0].value
    at.text_input(key="learn_tgt").input("a river").run()
    assert not at.exception
    assert _z(at, 1).shape == (len(tokenize(model, "a river")), n)
    assert at.query_params["learn_tgt"] in (["a river"], "a river")


def test_step11_cost_grows_with_length(trace):
    at = _open(11)
    table = at.dataframe[0].value
    assert list(table["tokens n"]) == list(COST_SIZES)
    expected = [attention_bytes(n, 6, 12) / 1e6 for n in COST_SIZES]
    np.testing.assert_allclose(table["scores + pattern (MB)"], expected)
    assert np.all(np.diff(table["scores + pattern (MB)"]) > 0)
    np.testing.assert_allclose(table["memory ÷ first row"], table["(n ÷ first n)²"])
    times = table["forward pass (ms)"].to_numpy()
    assert np.all(times > 0) and times[-1] > times[0]
    own = attention_bytes(trace.n_tokens, 6, 12)
    assert own == trace.scores_lhqk.nbytes + trace.pattern_lhqk.nbytes
    assert f"**{own:,} bytes**" in _words(at)
    curve = spec(at.get("plotly_chart")[0])["data"]
    np.testing.assert_allclose(array(curve[2]["y"]), expected)


def test_navigation_buttons_selector_and_url():
    at = _open(1)
    at.button(key="learn_next").click().run()
    assert at.header[0].value.startswith("2. ")
    assert at.query_params["step"] in (["2"], "2")
    at.button(key="learn_next_bottom").click().run()
    assert at.header[0].value.startswith("3. ")
    at.button(key="learn_prev").click().run()
    assert at.header[0].value.startswith("2. ")
    at.selectbox(key="step").select(9).run()
    assert at.header[0].value == f"9. {TITLES[8]}"
    assert at.get("progress")[0].proto.text == "Step 9 of 11"


def test_token_choice_survives_steps_without_the_selector():
    at = _open(7, learn_token="3")
    at.selectbox(key="step").select(1).run()  # step 1 has no token selector
    at.button(key="learn_next").click().run()
    at.button(key="learn_next").click().run()  # step 3
    assert at.selectbox(key="learn_token").value == 3


@pytest.mark.parametrize("preset", [next(iter(PRESETS)), list(PRESETS)[-1]])
def test_a_preset_walks_through_every_step(preset):
    at = _open(1, s=preset)
    for step in range(2, N_STEPS + 1):
        at.button(key="learn_next").click().run()
        assert not at.exception, (step, [e.value for e in at.exception])
        assert at.header[0].value == f"{step}. {TITLES[step - 1]}"


@pytest.mark.parametrize(("preset", "step"), zip(PRESETS, (1, 3, 4, 5, 6, 8), strict=True))
def test_presets_render(model, preset, step):
    at = _open(step, s=preset)
    trace = trace_sentence(model, preset)
    tokens = trace.tokens.tokens
    assert list(tokens) == list(tokenize(model, preset).tokens)
    escaped = [t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") for t in tokens]
    if step in EXPLORERS:  # the explorer gets the tokens as they are; the browser escapes them
        for key in EXPLORERS[step]:
            assert _explorer(at, key, trace, text=preset)["header"]["tokens"] == list(tokens)
    else:
        assert spec(_chart(at, 0))["layout"]["yaxis"]["ticktext"] == escaped
    if step == 5:  # the padding demo is still Plotly: the sentence, then three [PAD]s
        ticks = spec(_chart(at, "learn_pad_masked"))["layout"]["yaxis"]["ticktext"]
        assert ticks == [*escaped, "[PAD]", "[PAD]", "[PAD]"]


def test_hidden_special_tokens_and_a_bad_step_in_the_url(trace):
    at = _open(6, hide_special="1")
    assert _explorer(at, "learn_pattern", trace)["view"]["hide_special"] is True
    queries = list(at.dataframe[0].value["query"])
    assert queries == [f"{i}: {t}" for i, t in enumerate(trace.tokens.tokens)][1:-1]
    assert "[CLS]" not in " ".join(queries) and len(queries) == trace.n_tokens - 2
    at = open_page("learn", s=SENTENCE, step="12")
    assert not at.exception
    assert at.header[0].value.startswith("1. ")
    assert any("step" in w.value for w in at.sidebar.warning)


def test_user_text_never_reaches_latex_or_html():
    at = _open(1, s="$\\frac{1}{2}$ <b>x</b> bank")
    assert all("frac{1}" not in x.value for x in at.latex)
    assert "\\$" in " ".join(m.value for m in at.markdown)
    assert "<b>" not in " ".join(m.value for m in at.markdown)
