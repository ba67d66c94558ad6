"""Long text page on a shorter text (the sidebar's, ~300 tokens, so it stays quick): the maps and
the along-the-text chart show the engine's measures (methods.reach, itself checked against
transformers in tests/core/test_reach.py), each sentence says the counts those numbers give,
and the cost lesson's sentences are the fit of the timings it drew."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention_core import load_model, trace_sentence
from attention_core.lessons.cost import fit_cost, long_sizes, pattern_bytes
from attention_core.methods.reach import text_reach
from tests.app.conftest import APP
from tests.figdata import array, spec
from ui.text.long_text import FAR, NEAR, SHIPPED, SINK_LINE

TEXT = SHIPPED.read_text()[:1400]  # about 300 of SmolLM2's tokens


def _open(timeout: int = 300, text: str = TEXT) -> AppTest:
    """The page on ``text`` typed in the sidebar: a typed text is what the page opens on (the
    shipped one, ~1,900 tokens, is slow to read here)."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.query_params["s"] = text
    at.switch_page("pages/long_text.py")
    return at.run()


@pytest.fixture(scope="module")
def page() -> AppTest:
    return _open()


@pytest.fixture(scope="module")
def reach():
    smollm2 = load_model("smollm2")
    return text_reach(trace_sentence(smollm2, TEXT))


def _chart(at: AppTest, key: str) -> dict:
    """The figure of the chart drawn with ``key`` (its element id ends with it)."""
    [element] = [c for c in at.get("plotly_chart") if c.proto.id.rsplit("-", 1)[-1] == key]
    return spec(element)


def _texts(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_the_page_opens_on_the_sidebar_text_and_maps_every_head(page, reach):
    assert not page.exception, [e.value for e in page.exception]
    assert page.radio(key="lt_source").value == "sidebar"
    sink = _chart(page, "lt_sink_map")["data"][0]
    np.testing.assert_allclose(array(sink["z"]), reach.sink_lh, atol=1e-6)
    reach_map = _chart(page, "lt_reach_map")["data"][0]
    np.testing.assert_allclose(array(reach_map["z"]), reach.reach_lh, atol=1e-6)
    assert f"{reach.n_tokens:,} tokens" in " ".join(c.value for c in page.caption)


def test_each_sentence_says_what_the_numbers_give(page, reach):
    text = _texts(page)
    n_heads = reach.sink_lh.size
    assert f"**{int((reach.sink_lh > SINK_LINE).sum())} of {n_heads} heads**" in text
    assert f"would put **{reach.even_sink():.3f}** there" in text
    assert f"**{int((reach.reach_lh < NEAR).sum())} heads** read near" in text
    assert f"**{int((reach.reach_lh > FAR).sum())}** read far back" in text
    sink_b = np.nanmedian(reach.sink_lhb.reshape(n_heads, -1), 0)
    assert f"goes from **{sink_b[0]:.2f}** to **{sink_b[-1]:.2f}**" in text
    even_b = reach.even_sink_b()
    assert f"falls from {even_b[0]:.3f} to {even_b[-1]:.3f}" in text


def test_along_the_text_draws_the_sidebar_head_and_the_yardstick(page, reach):
    data = _chart(page, "lt_along")["data"]
    slider = page.session_state  # the sidebar's head: the page opens on the text's own view
    layer, head = slider["layer"], slider["head"]
    by_panel = {(d["name"], d.get("xaxis", "x")): array(d["y"]) for d in data}
    np.testing.assert_allclose(by_panel[("an even spread", "x")], reach.even_sink_b(), rtol=1e-6)
    np.testing.assert_allclose(by_panel[("an even spread", "x2")], 0.5)
    name = f"layer {layer}, head {head}"
    np.testing.assert_allclose(by_panel[(name, "x")], reach.sink_lhb[layer, head], rtol=1e-6)
    np.testing.assert_allclose(by_panel[(name, "x2")], reach.reach_lhb[layer, head], rtol=1e-6)
    median = np.nanmedian(reach.reach_lhb.reshape(reach.reach_lh.size, -1), 0)
    np.testing.assert_allclose(by_panel[("median over every head", "x2")], median, rtol=1e-6)


def test_a_short_text_says_what_it_cannot_show():
    one = _open(text="Hello")
    assert not one.exception and "single token" in one.info[0].value
    assert one.radio(key="lt_source").value == "sidebar"  # a typed text wins over the shipped one
    assert not one.get("plotly_chart")
    three = _open(text="the river bank")
    assert not three.exception
    assert any("fits in one stretch of 16 tokens" in box.value for box in three.info)
    assert _chart(three, "lt_sink_map")["data"] and _chart(three, "lt_reach_map")["data"]


def test_the_cost_lesson_fits_the_timings_it_draws():
    """Times SmolLM2 at every length up to its limit: the slowest test here (~20–60 s)."""
    at = _open(timeout=600)
    at.toggle(key="lt_timed").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    from ui.tour import cache  # the page's own cache: the same points it fitted

    cfg = load_model("smollm2").config
    points = [cache.long_cost_point("smollm2", n, SHIPPED.read_text())[0] for n in long_sizes(cfg)]
    ns = np.array([p.n_tokens for p in points])
    assert ns.tolist() == list(long_sizes(cfg))
    share = fit_cost(ns, np.array([p.seconds for p in points])).square_share(ns)
    text = _texts(at)
    for s, n in zip(share, ns, strict=True):
        assert f"**{s:.0%}** at {n:,}" in text
    patterns_mb = pattern_bytes(int(ns[-1]), cfg.n_layers, cfg.n_heads) / 1e6
    assert f"**{patterns_mb:,.0f} MB**" in text
    held = re.search(r"the trace holds \*\*(\d+) MB\*\*", text)
    assert held and int(held.group(1)) == round(points[-1].held_bytes / 1e6)
    assert points[-1].held_bytes < pattern_bytes(int(ns[-1]), cfg.n_layers, cfg.n_heads) / 10
    figure = _chart(at, "long_cost")["data"]
    measured = next(d for d in figure if d["name"] == "measured")
    np.testing.assert_allclose(array(measured["y"]), [p.seconds for p in points])


def test_shipped_text_is_a_page_that_smollm2_reads_whole():
    from attention_core import tokenize

    tokens = tokenize(load_model("smollm2"), Path(SHIPPED).read_text())
    assert tokens.n_cut == 0 and len(tokens) >= 1_500  # a page, none of it cut
