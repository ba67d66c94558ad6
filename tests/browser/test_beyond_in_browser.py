"""Beyond the weights as a person uses it, in Debian's Chromium against `streamlit run app.py`:
a clicked cell of the norm-weighted and the rollout panels reads the engine's numbers
(``norm_weighted_lhqk``, ``rollout_lqk``), the knock-out's numbers are the engine's, and the
importance sweep runs to its ranking. A screenshot goes to /tmp for a person to look at."""

from __future__ import annotations

import json
from urllib.parse import quote_plus

import pytest

from attention_core import WhatIf, default_token, load_model, trace_sentence
from attention_core.methods.knockout import vector_change
from attention_core.methods.norm_weighted import norm_weighted_lhqk
from attention_core.methods.rollout import rollout_lqk
from scripts.live_app import wait_idle

pytestmark = pytest.mark.browser

SENTENCE = "The river bank was muddy"
WAIT_MS = 60_000
SHOT = "/tmp/beyond_in_browser.png"  # the two explorers
SHOT_SWEEP = "/tmp/beyond_sweep_in_browser.png"  # the knock-out and the ranking


def _explorer(page, stage: str):
    """The explorer whose panels include ``stage`` (the page has two)."""
    return page.locator(".ax").filter(has=page.locator(f"figure.ax-panel[data-stage={stage}]"))


def _click_cell(page, stage: str, q: int, k: int) -> dict:
    """Click cell (query q, key k) of a stage's heatmap; the explorer's readout of it."""
    ax = _explorer(page, stage)
    canvas = ax.locator(f"figure.ax-panel[data-stage={stage}] canvas.ax-map")
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    cols, rows = canvas.evaluate("(c) => [c.width, c.height]")
    page.mouse.click(
        box["x"] + (k + 0.5) * box["width"] / cols, box["y"] + (q + 0.5) * box["height"] / rows
    )
    cell = ax.locator(".ax-cell")
    for _ in range(WAIT_MS // 100):
        raw = cell.get_attribute("data-cell")
        if raw and (c := json.loads(raw)).get("query") == q and c.get("key") == k:
            return c
        page.wait_for_timeout(100)
    raise AssertionError(f"no readout for ({q}, {k}) in the {stage} panel")


def _view(page, stage: str) -> dict:
    return json.loads(_explorer(page, stage).get_attribute("data-view"))


def test_the_new_stages_and_the_knock_out_read_the_engines_numbers(app_url, page):
    model = load_model()
    trace = trace_sentence(model, SENTENCE)
    weighted, rollout = norm_weighted_lhqk(trace), rollout_lqk(trace.pattern_lhqk)
    page.goto(f"{app_url}/beyond?s={quote_plus(SENTENCE)}")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stApp\"]') !== null", timeout=WAIT_MS
    )
    _explorer(page, "weighted").locator("canvas.ax-map").first.wait_for(timeout=WAIT_MS)
    _explorer(page, "rollout").locator("canvas.ax-map").first.wait_for(timeout=WAIT_MS)
    wait_idle(page, WAIT_MS)
    assert page.locator('[data-testid="stException"]').count() == 0
    # the knock-out of the sidebar's head, watched on the last real word
    layer, head = _view(page, "weighted")["layer"], _view(page, "weighted")["head"]
    token = default_token(trace.tokens.tokens, trace.tokens.special_t)
    knocked = trace_sentence(model, SENTENCE, WhatIf(knocked=((layer, head),)))
    change = vector_change(trace, knocked, token)
    said = page.get_by_text("Without those heads,")
    said.wait_for(timeout=WAIT_MS)
    assert f"cosine {change.cosine_l[-1]:.4f}" in said.text_content()
    # a click on the explorer just before the sweep's button: the explorer's report reruns the
    # page while the sweep runs, and the sweep must still finish (it once lost the press)
    _click_cell(page, "weighted", 2, 1)
    page.get_by_role("button", name="Rank every head").click()
    ranking = page.get_by_text("with that head alone knocked out")
    ranking.wait_for(timeout=WAIT_MS)
    wait_idle(page, WAIT_MS)
    ranking.scroll_into_view_if_needed()
    page.screenshot(path=SHOT_SWEEP)

    for q, k in ((3, 0), (3, 2), (5, 4)):
        cell = _click_cell(page, "weighted", q, k)
        assert cell["weighted"]["weighted"] == pytest.approx(
            float(weighted[layer, head, q, k]), rel=1e-6
        )
        assert cell["weighted"]["norm"] == pytest.approx(
            float(trace.value_norm_lhk[layer, head, k]), rel=1e-6
        )
    wait_idle(page, WAIT_MS)
    r_layer = _view(page, "rollout")["layer"]
    for q, k in ((3, 2), (6, 0)):
        cell = _click_cell(page, "rollout", q, k)
        assert cell["rollout"] == pytest.approx(float(rollout[r_layer, q, k]), rel=1e-6)

    assert page.locator('[data-testid="stException"]').count() == 0
    _explorer(page, "weighted").scroll_into_view_if_needed()
    page.screenshot(path=SHOT)


def test_smollm2_prediction_and_lens_draw(app_url, page):
    text = "Jane visits Africa"
    page.goto(f"{app_url}/beyond?model=smollm2&s={quote_plus(text)}")
    _explorer(page, "weighted").locator("canvas.ax-map").first.wait_for(timeout=WAIT_MS)
    said = page.get_by_text("Lost most:")
    said.wait_for(timeout=WAIT_MS)
    wait_idle(page, WAIT_MS)
    assert page.locator('[data-testid="stException"]').count() == 0
    page.get_by_text("The last row is the model's own prediction").scroll_into_view_if_needed()
    page.screenshot(path="/tmp/beyond_smollm2_in_browser.png")
