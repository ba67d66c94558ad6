"""Start here draws the visitor's own sentence at once, on its most telling head."""

import dataclasses
import inspect
import json
import re

import numpy as np
import pytest

from attention_core import cosine, embed_words, output_bias, trace_sentence
from attention_core.methods.telling import NEIGHBOUR_SHARE, telling_head
from tests.app.conftest import open_page, url_param
from ui import router
from ui.presets import BANK_PROBES, CURATED, MONEY_BANK, RIVER_BANK


def _view(at) -> dict:
    [element] = [e for e in at.get("bidi_component") if e.proto.id.endswith("home_pattern")]
    return json.loads(element.proto.json)


def test_a_typed_sentence_opens_on_its_telling_head(model):
    text = "dirty quantum plumbing leaks everywhere"
    at = open_page(None, s=text)
    assert not at.exception
    pick = telling_head(trace_sentence(model, text))
    data = _view(at)
    assert data["header"]["tokens"] == list(trace_sentence(model, text).tokens.tokens)
    view = data["view"]
    assert (view["layer"], view["head"], view["q"], view["k"]) == (
        pick.layer,
        pick.head,
        pick.query,
        pick.key,
    )
    assert data["stages"] == ["pattern"] and data["tell"] is False  # it never moves the sidebar
    said = re.sub(r"\\(.)", r"\1", " ".join(m.value for m in at.markdown))  # Markdown escapes
    assert f"{pick.weight:.3f} of its weight" in said
    pattern = trace_sentence(model, text).pattern_lhqk
    assert pick.weight == pytest.approx(float(pattern[pick.layer, pick.head, pick.query, pick.key]))
    # the caption states every exclusion of the rule (issue 35): neighbour-bound heads included,
    # and the rule itself leaves them out (methods.telling: half of every token's weight)
    caption = " ".join(c.value for c in at.caption)
    assert f"at least {NEIGHBOUR_SHARE:.0%} of every token's weight" in caption
    assert "just before or just after it are left out" in caption
    assert "fewer than two content words" in caption


@pytest.mark.parametrize("preset", CURATED[:2], ids=lambda p: p.sentence)
def test_a_preset_opens_on_its_curated_head_and_says_what_it_shows(model, preset):
    at = open_page(None, s=preset.sentence)
    assert not at.exception
    view = _view(at)["view"]
    assert (view["layer"], view["head"], view["q"], view["k"]) == (
        preset.layer,
        preset.head,
        preset.token,
        preset.key,
    )
    trace = trace_sentence(model, preset.sentence)
    weight = trace.pattern_lhqk[preset.layer, preset.head, preset.token, preset.key]
    token = trace.tokens.tokens[preset.token]
    lead = f"Layer {preset.layer}, head {preset.head}: “{token}” puts {weight:.3f} of its weight"
    assert lead in _said(at)
    caption = " ".join(c.value for c in at.caption)
    assert "measured on this example" in caption and "The rule: a head is named" in caption


def test_the_path_says_what_delta_e_really_is():
    at = open_page(None)
    text = " ".join(m.value for m in at.markdown)
    assert "E′ = E + ΔE is the token's vector in context" not in text
    assert "LayerNorm" in text and "feed-forward" in text and "proposals" in text
    assert "*q = E·W_Q + b_Q*" in text and "RoPE" not in text  # MiniLM: biases, no rotation


def test_the_path_on_smollm2_names_rmsnorm_and_rope():
    """SmolLM2 rescales E (RMSNorm) before W_Q and turns q and k by position (RoPE), and its
    projections have no bias: the path says so, not MiniLM's q = E·W_Q + b_Q (issue 35)."""
    at = open_page(None, model="smollm2")
    text = " ".join(m.value for m in at.markdown)
    assert "*q = RMSNorm(E)·W_Q*" in text and "b_Q" not in text and "RoPE" in text


def test_no_sentence_no_view():
    at = open_page(None, s="   ")
    assert not at.exception
    assert not at.get("bidi_component")


def _said(at) -> str:
    return re.sub(r"\\(.)", r"\1", " ".join(m.value for m in at.markdown))  # Markdown escapes


@pytest.mark.parametrize("name", ["minilm", "smollm2"])
def test_the_bank_sentence_quotes_what_the_probes_show(engines, name):
    """Not "bank drifts toward water": both banks stay nearer the money words; each sentence
    pulls its bank towards its own sense only compared with the other (cosines after the last
    layer, each probe run alone through the model)."""
    engine = engines[name]
    at = open_page(None, model=name)
    assert not at.exception
    said = _said(at)
    assert "drifts toward" not in said
    probes = embed_words(engine, list(BANK_PROBES))[-1]  # [p, d] after the last layer
    cos = {}
    for text in (RIVER_BANK, MONEY_BANK):
        trace = trace_sentence(engine, text)
        [t] = [i for i, tok in enumerate(trace.tokens.tokens) if "bank" in tok.lower()]
        cos[text] = cosine(trace.hidden_ltd[-1, t], probes)
    river, deposit = cos[RIVER_BANK], cos[MONEY_BANK]
    water = int(np.argmax((river - deposit)[:2]))
    money = 2 + int(np.argmax((deposit - river)[2:]))
    assert (
        f"in “{RIVER_BANK}” it has cosine {river[water]:.3f} with the word {BANK_PROBES[water]} "
        f"and {river[money]:.3f} with {BANK_PROBES[money]}; in “{MONEY_BANK}”, "
        f"{deposit[water]:.3f} and {deposit[money]:.3f}."
    ) in said.replace("*", "")
    assert river[water] > deposit[water] and deposit[money] > river[money]  # "pulls towards"
    assert river[money] > river[water] and deposit[money] > deposit[water]  # "both stay nearer"
    assert f"both stay nearer *{BANK_PROBES[money]}* than *{BANK_PROBES[water]}*" in said


@pytest.mark.parametrize("name", ["minilm", "smollm2"])
def test_the_feed_forward_weights_are_counted_from_the_model(engines, name):
    """Not "a small feed-forward network": MiniLM's has twice the attention's weights, SmolLM2's
    three times (matrices of one block, from the config: W_Q and W_O are d × d, W_K and W_V
    d × (KV heads · d_head), the feed-forward two (gated: three) d × d_ff)."""
    cfg = engines[name].config
    inner = cfg.n_heads * cfg.d_head
    attention = 2 * cfg.d_model * inner + 2 * cfg.d_model * cfg.n_kv_heads * cfg.d_head
    feed_forward = (3 if cfg.family == "llama" else 2) * cfg.d_model * cfg.d_ff
    at = open_page(None, model=name)
    ratio = f"{feed_forward / attention:.1f}"
    assert ratio == {"minilm": "2.0", "smollm2": "3.0"}[name]
    assert f"a feed-forward network with {ratio} times as many weights as the attention" in (
        _said(at)
    )
    assert "small feed-forward" not in _said(at)


def test_the_bias_is_measured_against_delta_e(model):
    """Not "a small fixed bias": on the default sentence ‖b_O‖ is a median 38 % of ‖ΔE‖."""
    trace = trace_sentence(model, RIVER_BANK)
    bias_l = np.array([np.linalg.norm(output_bias(model, layer)) for layer in range(6)])
    shares = bias_l[:, None] / np.linalg.norm(trace.delta_ltd.astype(np.float64), axis=-1)
    at = open_page(None, s=RIVER_BANK)
    said = _said(at)
    assert (
        f"its length is a median {np.median(shares):.0%} of ΔE's, from {shares.min():.0%} to "
        f"{shares.max():.0%}"
    ) in said
    assert 0.25 <= np.median(shares) <= 0.5 and "small fixed bias" not in said
    assert "mean 0 and spread 1, then a learned gain and bias" in said  # LayerNorm, whole


def _chart(at) -> tuple[int, int]:
    view = _view(at)["view"]
    return view["layer"], view["head"]


def _sidebar(at) -> tuple[int, int]:
    return at.sidebar.slider(key="layer").value, at.sidebar.slider(key="head").value


def _url(at) -> tuple[int, int]:
    return int(url_param(at, "layer") or 2), int(url_param(at, "head") or 0)  # 2, 0: defaults


def test_one_head_on_the_screen_after_typing_a_sentence(model):
    """Item 4: the sidebar, the URL, the chart and the sentence above it name one head, after a
    sentence is typed, after a slider moves, and after the button to the telling head."""
    at = open_page(None)
    assert _chart(at) == _sidebar(at) == _url(at) == (1, 9)
    typed = "dirty quantum plumbing leaks everywhere"
    at.sidebar.text_input(key="s").input(typed)
    at.sidebar.button[0].click().run()  # the sentence form's Run
    assert not at.exception
    assert _chart(at) == _sidebar(at) == _url(at)
    layer, head = _chart(at)
    assert at.subheader[0].value == f"Your sentence, layer {layer}, head {head}"
    trace = trace_sentence(model, typed)
    pick = telling_head(trace)
    if (layer, head) != (pick.layer, pick.head):  # the router opens it in follow_sentence
        weight = trace.pattern_lhqk[layer, head, pick.query]
        key = int(np.argmax(weight))
        assert (
            f"Layer {layer}, head {head} (the sidebar's): “{trace.tokens.tokens[pick.query]}” "
            f"puts {weight[key]:.3f} of its weight on “{trace.tokens.tokens[key]}”"
        ) in _said(at)
        assert "No token gets more of its weight in this head." in _said(at)
        at.button(key="home_open_view").click().run()
    assert _chart(at) == _sidebar(at) == _url(at) == (pick.layer, pick.head)
    assert f"{pick.weight:.3f} of its weight" in _said(at)
    assert not any(b.key == "home_open_view" for b in at.button)
    at.sidebar.slider(key="head").set_value((pick.head + 1) % 12).run()
    assert _chart(at) == _sidebar(at) == _url(at) == (pick.layer, (pick.head + 1) % 12)


@pytest.mark.skipif(
    "follow_sentence" not in inspect.getsource(router.frame),
    reason="ui.router.frame does not call follow_sentence yet",
)
def test_a_sentence_typed_on_start_here_opens_its_telling_head(model):
    at = open_page(None)
    typed = "dirty quantum plumbing leaks everywhere"
    at.sidebar.text_input(key="s").input(typed)
    at.sidebar.button[0].click().run()
    pick = telling_head(trace_sentence(model, typed))
    assert _chart(at) == _sidebar(at) == _url(at) == (pick.layer, pick.head)
    at.switch_page("pages/values.py").run()  # elsewhere a new sentence keeps the head
    at.sidebar.text_input(key="s").input("Jane visits Africa today")
    at.sidebar.button[0].click().run()
    assert _sidebar(at) == (pick.layer, pick.head)


@pytest.mark.parametrize("model_key", ["minilm", "smollm2"])
def test_the_projections_have_biases_exactly_when_the_model_has_them(model_key, engines):
    """MiniLM's query, key and value projections add a bias; SmolLM2's (Llama) have none."""
    at = open_page(model=model_key)
    path = next(m.value for m in at.markdown if "The path of one attention head" in m.value)
    engine = engines[model_key]
    if hasattr(engine, "weights"):  # BERT: the checkpoint's names
        has_bias = any(name.endswith("attention.self.query.bias") for name in engine.weights)
    else:  # Llama: one layer's arrays as attention_core.models.llama.model lays them out
        has_bias = any("b_" in f.name for f in dataclasses.fields(engine.params.layer(0)))
    assert has_bias == (model_key == "minilm")
    for x in "QKV":
        assert (f"·W_{x} + b_{x}*" in path) == has_bias
        assert f"E·W_{x}" in path or f"RMSNorm(E)·W_{x}" in path
