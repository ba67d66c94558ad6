"""The guided tour against the engine: every step, its numbers, its navigation, its URL state."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from attention_core import (
    COST_SIZES,
    attention_bytes,
    attention_steps,
    cosine,
    output_bias,
    row_entropy_bits,
    tokenize,
    trace_sentence,
)
from attention_core.lessons.demos import (
    crossover_tokens,
    drift,
    padding_demo,
    query_from_weights,
    repeated_word,
    special_share,
)
from attention_core.lessons.saturation import scale_effect
from tests.app.conftest import engineers_text, learner_texts, open_page, url_param
from tests.figdata import array, spec
from ui import tour
from ui.presets import PRESETS
from ui.tour.common import BANK_A, BANK_B
from viz.embedding_shift import layer_name

N_STEPS = tour.N_STEPS
TITLES = tour.titles()
STEP = {name: k for k, name in enumerate(tour.ORDER, start=1)}  # step number by module name

SENTENCE = "the cat saw the dog near the bank"  # "the" repeats; "bank" is token 8
LAYER, HEAD, TOKEN = 2, 5, 8
HEADS = tuple(f"learn_heads_{slot}" for slot in range(4))  # four heads side by side
EXPLORERS = {
    STEP["scores"]: ("learn_scores",),
    STEP["softmax"]: ("learn_pattern",),
    STEP["scaling"]: ("learn_scaled",),
    STEP["masking"]: ("learn_masked",),
    STEP["heads"]: HEADS,
}
CODE_NAME = re.compile(r"`|\btrace\.|\battention_core\b|\b[a-z]{2,}_[a-z_]+\b")
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
    assert data["text"] == text and data["model"] == "minilm"
    roles = data["header"]["roles"]  # each head's badge (checked in tests/core/test_pack.py)
    assert (len(roles), len(roles[0])) == (6, 12)
    assert {k: v for k, v in data["header"].items() if k != "roles"} == {
        "tokens": list(trace.tokens.tokens),
        "special": trace.tokens.special_t.tolist(),
        "kept_hiding_special": [i for i, s in enumerate(trace.tokens.special_t) if not s],
        "n_layers": 6,
        "n_heads": 12,
        "d_head": 32,
        "n_tokens": trace.n_tokens,
        "n_kv_heads": 12,
        "causal": False,  # MiniLM: every head its own keys, no mask of its own
    }
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
    assert link.page == tour.step(step).PAGE and link.label.startswith("Explore further")
    assert at.button(key="learn_prev").disabled == (step == 1)
    assert at.button(key="learn_next").disabled == (step == N_STEPS)
    # learners read words: code names only in the closed "For engineers" expander
    assert [box.label for box in at.expander] == ["For engineers"]
    assert not at.expander[0].proto.expanded
    learner = learner_texts(at.main)
    assert learner and not [t for t in learner if CODE_NAME.search(t)]
    assert CODE_NAME.search(engineers_text(at))


def test_step_order_softmax_before_the_steps_that_lean_on_it():
    assert STEP["scores"] < STEP["softmax"] < STEP["scaling"] < STEP["masking"]
    assert tour.ORDER[0] == "tokens" and tour.ORDER[-1] == "cost"
    assert len(set(TITLES)) == N_STEPS
    with pytest.raises(ValueError, match="step must be"):
        tour.step(N_STEPS + 1)


def test_step_tokens_same_word_same_static_vector(model, trace):
    at = _open(STEP["tokens"])
    a, b = trace_sentence(model, BANK_A), trace_sentence(model, BANK_B)
    ia, ib = a.tokens.tokens.index("bank"), b.tokens.tokens.index("bank")
    assert _metric(at, "“bank”: cosine of the static") == "1.000"
    after = cosine(a.hidden_ltd[-1, ia], b.hidden_ltd[-1, ib])
    assert _metric(at, "“bank”: cosine after all 6 layers") == f"{after:.3f}"
    assert after < 0.99  # the contextual vectors really differ
    twin = repeated_word(trace)
    text = _words(at)
    assert "positions 1 and 4: static cosine **1.000**" in text  # "the" repeats in SENTENCE
    assert f"after the 6 layers **{twin.context_cos:.3f}**" in text
    assert f"{cosine(trace.hidden_ltd[-1, 1], trace.hidden_ltd[-1, 4]):.3f}" in text
    assert "vocabulary of 30,522" in text and "384 numbers" in text  # from the config
    np.testing.assert_array_equal(_z(at, 0), trace.word_td)


def test_step_positions_are_the_models_and_the_sine_waves(trace):
    at = _open(STEP["positions"])
    np.testing.assert_allclose(_z(at, 0), trace.position_td, atol=1e-7)
    assert f"= {np.sin(1.0):.3f}" in _words(at)
    assert _z(at, 1)[0, 1] == pytest.approx(1.0)  # cos(0) in the first position's dimension 1
    assert "its 512 position vectors" in _words(at)
    assert "hidden state 0 (“embedding”): the input of layer 0" in _words(at)


def test_step_queries_recomputed_from_weights_matches_the_pass(model, trace):
    at = _open(STEP["queries"], learn_token=str(TOKEN))
    q = trace.q_lhqe[LAYER, HEAD]
    np.testing.assert_allclose(_z(at, 0), q[:, :8], atol=1e-6)
    np.testing.assert_allclose(_z(at, 1), trace.k_lhke[LAYER, HEAD][:, :8], atol=1e-6)
    rec = query_from_weights(model, LAYER, HEAD, trace.hidden_ltd[LAYER, TOKEN])
    value = f"{rec.q_e[0]:.3f}"
    assert value == f"{q[TOKEN, 0]:.3f}"
    assert f"= {value}" in " ".join(x.value for x in at.latex)
    assert f"q = **{value}**" in _words(at)
    assert f"({rec.b_e[0]:.3f}) = {value}" in _words(at)
    assert "trace.q_lhqe" in engineers_text(at)


def test_step_scores_are_the_raw_dot_products(trace):
    at = _open(STEP["scores"], learn_token=str(TOKEN))
    data = _explorer(at, "learn_scores", trace)
    assert data["stages"] == ["scores"] and data["controls"] == ["layer", "head"]
    assert data["view"] == VIEW
    row = trace.scores_lhqk[LAYER, HEAD, TOKEN]
    j, low = int(np.argmax(row)), int(np.argmin(row))
    text = _words(at)
    assert f"= {row[j]:.3f}" in text
    assert f"(**{row[j]:.2f}**)" in text and f"(**{row[low]:.2f}**)" in text


def test_step_softmax_rows_sum_to_one_top_keys_and_shift(trace):
    at = _open(STEP["softmax"], learn_token=str(TOKEN))
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
    text = _words(at)
    assert f"= {pattern[TOKEN, best]:.3f}" in text
    assert r"c = 10 \Rightarrow \max_j |\Delta a_{8,j}| = 0.000" in text
    assert "adding the same number to every score of a row" in text
    assert "√d_k = √32 ≈ 5.66" in text


def test_step_scaling_spread_gradient_and_saturation(trace):
    at = _open(STEP["scaling"], learn_token=str(TOKEN))
    scores = trace.scores_lhqk[LAYER, HEAD]
    scaled = attention_steps(scores, 32)
    raw = attention_steps(scores, 32, scale=False)
    data = _explorer(at, "learn_scaled", trace)
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
    text = _words(at)
    assert f"= {scaled.scores[TOKEN, j]:.3f}" in text
    assert f"{scaled.scaled[TOKEN, j]:.3f}" in text
    eff = scale_effect(scores, 32)
    assert f"spread by **{eff.spread_raw:.3f}**" in text
    assert f"by **{eff.spread_scaled:.3f}**" in text
    without = f"**{eff.grad_raw:.3f}** per row without the division"
    assert f"{without} and **{eff.grad_scaled:.3f}**" in text
    assert f"= **{eff.grad_to_scores:.3f}**" in text
    assert "its average stays near 0" in text and "grows like √d_k" in text
    assert "its gradient vanishes" in text and "What-if on this head" in text
    saturation = spec(_chart(at, "learn_saturation"))["data"]
    assert {t["name"] for t in saturation} == {"with ÷√d_k", "without scaling"}


def test_step_masking_causal_and_padding(model, trace):
    at = _open(STEP["masking"], learn_token="3")
    data = _explorer(at, "learn_masked", trace)  # the browser sets −∞ above the diagonal
    assert data["stages"] == ["masked", "pattern"] and data["controls"] == ["layer", "head"]
    assert data["view"] == VIEW | {"causal": True}
    n = trace.n_tokens
    causal = attention_steps(trace.scores_lhqk[LAYER, HEAD], 32, causal=True).pattern
    assert np.all(causal[np.triu_indices(n, 1)] == 0)
    np.testing.assert_allclose(causal.sum(axis=1), 1.0, atol=1e-5)
    later = trace.pattern_lhqk[LAYER, HEAD, 3, 4:].sum()
    text = _words(at)
    assert (
        f"gives **{later:.3f}** of its attention to later tokens; "
        "with the mask switched on, **0.000**" in text
    )
    assert "Largest weight above the diagonal: **0.000**" in text
    assert rf"{later:.3f} \to 0.000" in text and r"a_{3,j} = 1.000" in text
    pad = padding_demo(model, trace, 3)
    padded = _z(at, "learn_pad_masked")
    assert padded.shape == (n + 3, n + 3)
    assert np.all(padded[:n, n:] == 0)
    np.testing.assert_allclose(padded, pad.masked_hqk[HEAD], atol=1e-7)
    np.testing.assert_allclose(_z(at, "learn_pad_free"), pad.free_hqk[HEAD], atol=1e-7)
    np.testing.assert_allclose(padded[:n, :n], trace.pattern_lhqk[0, HEAD], atol=1e-6)
    assert _metric(at, "weight on [PAD], with the mask") == "0.000"
    leak = _metric(at, "weight on [PAD], no mask")
    assert leak == f"{pad.leak_hq[HEAD].mean():.3f}" and float(leak) > 0
    assert float(_metric(at, "largest change")) < 1e-6
    assert "largest change" in engineers_text(at) and "key_mask_k" in engineers_text(at)


def test_step_values_weighted_sum_and_update(trace):
    at = _open(STEP["values"], learn_token=str(TOKEN))
    bars = array(spec(at.get("plotly_chart")[0])["data"][0]["y"])
    np.testing.assert_allclose(bars, trace.pattern_lhqk[LAYER, HEAD, TOKEN], atol=1e-6)
    text = _words(at)
    assert f"\\|z_{{{TOKEN}}}\\| = {np.linalg.norm(trace.z_lhqe[LAYER, HEAD, TOKEN]):.3f}" in text
    assert f"= {np.linalg.norm(trace.delta_ltd[LAYER, TOKEN]):.3f}" in text
    assert "a LayerNorm rescales that sum, the block's feed-forward network adds" in text
    strips = _z(at, 1)
    e = trace.hidden_ltd[LAYER, TOKEN]
    np.testing.assert_allclose(
        strips, [e, trace.delta_ltd[LAYER, TOKEN], e + trace.delta_ltd[LAYER, TOKEN]], atol=1e-5
    )


def test_step_heads_side_by_side_their_sum_and_the_markers(model, trace):
    at = _open(STEP["heads"], learn_token=str(TOKEN))
    for slot, key in enumerate(HEADS):  # each its own head, fixed: no controls
        data = _explorer(at, key, trace)
        assert data["stages"] == ["pattern"] and data["controls"] == []
        assert data["view"] == VIEW | {"head": (HEAD + slot) % 12}
    assert [_explorers(at)[key]["view"]["head"] for key in HEADS] == [5, 6, 7, 8]
    wrapped = open_page("learn", s=SENTENCE, step=str(STEP["heads"]), layer=str(LAYER), head="10")
    assert [_explorers(wrapped)[key]["view"]["head"] for key in HEADS] == [10, 11, 0, 1]
    norms = array(spec(_chart(at, "learn_head_norms"))["data"][0]["y"])
    np.testing.assert_allclose(
        norms, np.linalg.norm(trace.head_delta_lhtd[LAYER, :, TOKEN], axis=-1), rtol=1e-5
    )
    total = trace.head_delta_lhtd[LAYER, :, TOKEN].sum(0) + output_bias(model, LAYER)
    assert f"= {np.linalg.norm(total):.3f}" in _words(at)
    assert float(_metric(at, "largest difference")) < 1e-5
    share = special_share(trace, LAYER)
    np.testing.assert_allclose(
        array(spec(_chart(at, "learn_special"))["data"][0]["y"]), share, rtol=1e-5
    )
    text = _words(at)
    assert f"**{share.mean():.0%}** of a word's attention" in text
    assert f"(head {HEAD}: **{share[HEAD]:.0%}**" in text
    assert (
        "park that weight there, as a “no-op”" in text and f"**{2 / trace.n_tokens:.0%}**" in text
    )


def test_step_block_each_labelled_stage_and_the_drift(model, trace):
    at = _open(STEP["block"], learn_token=str(TOKEN))
    bars = spec(_chart(at, "learn_block_norms"))["data"][0]
    h, d = trace.hidden_ltd[:, TOKEN], trace.delta_ltd[LAYER, TOKEN]
    a, f = trace.attn_out_ltd[LAYER, TOKEN], trace.ffn_out_ltd[LAYER, TOKEN]
    expected = [h[LAYER], d, h[LAYER] + d, a, f, a + f, h[LAYER + 1]]
    np.testing.assert_allclose(array(bars["y"]), np.linalg.norm(expected, axis=-1), rtol=1e-5)
    assert list(bars["x"]) == [
        "E (in)",
        "ΔE = Σ_h ΔE_h + b_O",
        "E + ΔE",
        "a = LayerNorm(E + ΔE)",
        "feed-forward FFN(a)",
        "a + FFN(a)",
        f"LayerNorm(a + FFN(a)) = after layer {LAYER}",
    ]
    bank, stack = (df.value for df in at.dataframe)  # "bank" by river and deposit, then yours
    assert list(stack["hidden state"]) == [layer_name(s) for s in range(7)]
    assert list(stack["hidden state"])[:2] == ["embedding", "after layer 0"]
    np.testing.assert_allclose(stack["‖h‖"], np.linalg.norm(h, axis=-1), rtol=1e-5)
    dr = drift(trace, TOKEN)
    np.testing.assert_allclose(stack["cos with the state before"], [1.0, *dr.step_cos_l], 1e-6)
    np.testing.assert_allclose(stack["cos with the static vector"], dr.static_cos_s, rtol=1e-6)
    ta, tb = trace_sentence(model, BANK_A), trace_sentence(model, BANK_B)
    ia, ib = ta.tokens.tokens.index("bank"), tb.tokens.tokens.index("bank")
    np.testing.assert_allclose(bank["A: cos(in, out)"], drift(ta, ia).step_cos_l, rtol=1e-6)
    np.testing.assert_allclose(bank["B: cos(in, out)"], drift(tb, ib).step_cos_l, rtol=1e-6)
    apart = [cosine(ta.hidden_ltd[s, ia], tb.hidden_ltd[s, ib]) for s in range(1, 7)]
    np.testing.assert_allclose(bank["A vs B after the layer"], apart, rtol=1e-5)
    static = drift(ta, ia).static_cos_s
    assert f"falls from **{static[0]:.3f}** (embedding) to **{static[-1]:.3f}**" in _words(at)
    assert f"end at **{apart[-1]:.3f}**" in _words(at)
    active = int((trace.ffn_hidden_ltf[LAYER, TOKEN] > 0).sum())
    assert f"{active} \\text{{ of }} 1536" in _words(at)
    assert "Why stack blocks?" in _words(at)


def test_step_cost_split_crossover_and_memory(model, trace):
    at = _open(STEP["cost"])
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
    text = _words(at)
    assert f"**{own // 4:,} numbers**" in text and f"**{own / 1e6:.3f} MB**" in text
    assert f"{own:,} bytes" in engineers_text(at)
    assert "bytes" not in " ".join(learner_texts(at.main))
    assert crossover_tokens(model.config) == 2304 and "n = 2d + d_ff = 2,304 tokens" in text
    assert "beyond the 512 positions" in text and "bends towards" not in text
    curve = spec(_chart(at, "learn_cost"))["data"]
    np.testing.assert_allclose(array(curve[2]["y"]), expected)
    split = spec(_chart(at, "learn_cost_split"))["data"]
    assert [t["name"] for t in split] == ["attention", "dense layers"]
    att = array(split[0]["y"])
    np.testing.assert_allclose(att + array(split[1]["y"]), 100.0)
    assert f"**{att[0] / 100:.0%}** of a layer's time at 16 tokens" in text
    assert f"**{att[-1] / 100:.0%}** at 512" in text
    # the whole pass against the six layers' own work: its time is the table's, and larger
    assert f"at 512 tokens it took **{times[-1]:.0f} ms**, while the 6 layers'" in text
    layers_ms = float(text.split("dense work alone (the split above) take **")[1].split(" ms")[0])
    assert 0 < layers_ms < times[-1]  # "the difference is the rest of the engine's work"


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
    assert at.get("progress")[0].proto.text == f"Step 9 of {N_STEPS}"


def test_readme_softmax_link_opens_the_softmax_step():
    at = open_page("learn", s="The river bank was muddy", step=str(STEP["softmax"]))
    assert not at.exception
    assert at.header[0].value == f"{STEP['softmax']}. Softmax: who looks at whom"


def test_token_choice_survives_steps_without_the_selector():
    at = _open(STEP["values"], learn_token="3")
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


PRESET_STEPS = ("tokens", "queries", "scores", "masking", "softmax", "heads")


@pytest.mark.parametrize(("preset", "name"), zip(PRESETS, PRESET_STEPS, strict=True))
def test_presets_render(model, preset, name):
    step = STEP[name]
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
    if name == "masking":  # the padding demo is still Plotly: the sentence, then three [PAD]s
        ticks = spec(_chart(at, "learn_pad_masked"))["layout"]["yaxis"]["ticktext"]
        assert ticks == [*escaped, "[PAD]", "[PAD]", "[PAD]"]


def test_hidden_special_tokens_and_a_bad_step_in_the_url(trace):
    at = _open(STEP["softmax"], hide_special="1")
    assert _explorer(at, "learn_pattern", trace)["view"]["hide_special"] is True
    queries = list(at.dataframe[0].value["query"])
    assert queries == [f"{i}: {t}" for i, t in enumerate(trace.tokens.tokens)][1:-1]
    assert "[CLS]" not in " ".join(queries) and len(queries) == trace.n_tokens - 2
    at = open_page("learn", s=SENTENCE, step=str(N_STEPS + 1))
    assert not at.exception
    assert at.header[0].value.startswith("1. ")
    assert any("step" in w.value for w in at.sidebar.warning)


def test_user_text_never_reaches_latex_or_html():
    at = _open(1, s="$\\frac{1}{2}$ <b>x</b> bank")
    assert all("frac{1}" not in x.value for x in at.latex)
    assert "\\$" in " ".join(m.value for m in at.markdown)
    assert "<b>" not in " ".join(m.value for m in at.markdown)


def test_the_tour_shows_minilm_in_the_sidebar_and_hands_smollm2_back_after():
    """One model per screen: the tour teaches on MiniLM, so its sidebar and URL say MiniLM
    even when the visitor picked SmolLM2, and a page that shows SmolLM2 gets it back."""
    at = open_page("learn", s=SENTENCE, model="smollm2")
    assert not at.exception and not at.error
    assert at.selectbox(key="model").value == "minilm" and "model" not in at.query_params
    assert "you picked SmolLM2-135M-Instruct (decoder)" in at.info[0].value
    assert f"step {STEP['decoder']} a decoder (SmolLM2)" in at.info[0].value
    assert f"Step {STEP['masking']} shows the mask of a decoder" in at.info[0].value
    assert at.header[0].value.startswith("1. ")  # the tour's first step, on MiniLM
    at.switch_page("pages/pattern.py").run()
    assert not at.exception and at.selectbox(key="model").value == "smollm2"
    assert url_param(at, "model") == "smollm2"
