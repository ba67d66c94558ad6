"""SmolLM2 in a real browser, as a person uses it: the explorer draws the decoder's own numbers
(its causal mask fixed on, the heads sharing keys and values named), the all-heads grid shows its
30 × 9 heads, and Generate writes the model's own greedy tokens one click at a time.

Every number read off the page is compared with the engine's (which tests/core checks against
transformers on the same GGUF file).
"""

from __future__ import annotations

import json
import math
import time
from urllib.parse import quote_plus

import pytest

from attention_core import (
    attention_steps,
    cell_arithmetic,
    choose,
    start_generation,
    trace_sentence,
)
from bench.decoder import STEP_VIEW
from scripts.live_app import wait_idle
from tests.browser.test_explorer import (
    LIVE,
    STATE,
    WAIT_MS,
    Wire,
    canvas_geometry,
    cell_point,
    close,
    close_rel,
    close_shown,
    hover,
    live,
    open_pattern,
    state,
)

pytestmark = pytest.mark.browser

SENTENCE = "The river bank was muddy after the rain"
PROMPT = "The capital of France is"


@pytest.fixture(scope="module")
def decoder_trace(smollm2):
    return trace_sentence(smollm2, SENTENCE)


def test_the_explorer_draws_the_decoders_own_numbers(app_url, page, decoder_trace):
    trace, n = decoder_trace, decoder_trace.n_tokens
    layer, head = 17, 4
    got = open_pattern(
        page, app_url, f"model=smollm2&s={quote_plus(SENTENCE)}&layer={layer}&head={head}"
    )
    assert got["title"] == f"layer {layer}, head {head} (keys and values shared by heads 3–5)"
    assert got["view"]["causal"] is True
    causal = live(page).locator("[data-name=causal]")
    assert causal.is_checked() and causal.is_disabled()
    assert "the model's own" in live(page).locator(".ax-causal").text_content()
    assert not live(page).locator(".ax-special").is_visible()  # no [CLS]/[SEP] to hide
    labels = live(page).locator("figure.ax-panel[data-stage=pattern] .ax-rows span")
    assert [s.split(": ", 1)[1] for s in labels.evaluate_all("(e) => e.map((x) => x.title)")] == [
        *trace.tokens.tokens
    ]
    steps = attention_steps(trace.scores_lhqk[layer, head], trace.config.d_head, causal=True)
    for stage in ("scores", "scaled", "masked", "pattern"):
        geometry = canvas_geometry(page, stage)
        for q, k in [(n - 1, 0), (n - 1, n - 2), (3, 1), (2, 5)]:  # (2, 5): above the diagonal
            hq, hk, value, shown = hover(page, stage, q, k, geometry)
            want = float(getattr(steps, stage)[q, k])
            assert (hq, hk) == (q, k)
            if k > q and stage == "masked":
                assert value == shown == want == -math.inf
            elif k > q and stage == "pattern":
                assert value == shown == want == 0.0
            else:
                assert close_rel(value, want) and close_shown(shown, want), (stage, q, k)
    # A click on a cell: its arithmetic, with the query and key of this head (its KV group's key).
    box, rows, cols = canvas_geometry(page, "pattern")
    page.mouse.click(*cell_point(box, rows, cols, n - 1, 2))
    page.wait_for_function(
        f"() => {{ const b = ({LIVE}).querySelector('.ax-cell');"
        " return !!b.dataset.cell && JSON.parse(b.dataset.cell).key === 2; }",
        timeout=WAIT_MS,
    )
    cell = json.loads(live(page).locator(".ax-cell").get_attribute("data-cell"))
    want = cell_arithmetic(trace.q_lhqe[layer, head], trace.k_lhke[layer, head], steps, n - 1, 2)
    assert len(cell["products"]) == trace.config.d_head == 64
    assert close_rel(cell["score"], want.score) and close(cell["share"], want.share)


def test_keys_walk_the_decoders_thirty_layers_and_nine_heads(app_url, page):
    open_pattern(page, app_url, f"model=smollm2&s={quote_plus(SENTENCE)}&layer=28&head=8")
    live(page).locator(".ax-title").click()
    page.keyboard.press("ArrowDown")  # layer 29, the last
    page.keyboard.press("ArrowDown")  # stays there
    page.keyboard.press("ArrowLeft")  # head 7
    page.wait_for_function(
        f"() => ({STATE})()?.view.layer === 29 && ({STATE})().view.head === 7", timeout=WAIT_MS
    )
    assert state(page)["title"].startswith("layer 29, head 7 (keys and values shared by heads 6–8)")


def test_all_heads_shows_every_decoder_head_in_its_groups(app_url, page):
    page.goto(f"{app_url}/all_heads?model=smollm2&s={quote_plus(SENTENCE)}")
    grid = '[data-testid="stBidiComponentIsolated"]'
    count = f"""() => {{
        const host = [...document.querySelectorAll('{grid}')].find(
            (h) => h.shadowRoot && h.shadowRoot.querySelector('.ax-heads'));
        const ax = host && host.shadowRoot.querySelector('.ax-heads');
        return ax && Number(ax.dataset.drawn) >= 30
            ? [ax.querySelectorAll('.ax-thumb').length,
               ax.querySelectorAll('.ax-kv-start').length] : null;
    }}"""
    thumbs, group_starts = page.wait_for_function(count, timeout=WAIT_MS).json_value()
    assert thumbs == 30 * 9
    assert group_starts == 30 * 2  # a gap before heads 3 and 6 of every layer


def test_generate_writes_the_models_greedy_tokens(app_url, page, smollm2):
    page.goto(f"{app_url}/generate")
    box = page.get_by_label("Prompt")
    box.wait_for(timeout=WAIT_MS)
    box.fill(PROMPT)
    box.press("Enter")
    written = page.locator('[data-testid="stCode"]').first
    written.filter(has_text=PROMPT).wait_for(timeout=WAIT_MS)
    gen = start_generation(smollm2, PROMPT)
    for _ in range(3):
        gen = gen.step(choose(gen.last))
        page.get_by_role("button", name="Next token").click()
        want = " ".join((PROMPT + gen.text).split())  # the page's box keeps no trailing newline
        deadline = time.monotonic() + WAIT_MS / 1000
        while " ".join(written.text_content().split()) != want:
            assert time.monotonic() < deadline, (written.text_content(), want)
            page.wait_for_timeout(100)
    assert " Paris" in want


def test_the_step_view_draws_every_layer_in_the_browser(app_url, page, smollm2):
    # The new token's attention per head, read off the page by hovering, against the engine's
    # generation; the layer buttons redraw without a websocket frame (no rerun).
    wire = Wire(page)  # listens from the start: the page's websocket and every frame it sends
    page.goto(f"{app_url}/generate")
    page.wait_for_function(f"() => !!({STEP_VIEW})()", timeout=WAIT_MS)
    wait_idle(page, WAIT_MS)
    gen = start_generation(smollm2, PROMPT)
    n = len(gen.ids)
    ax = page.locator(".ax-step")
    assert ax.get_attribute("data-n") == str(n) and ax.get_attribute("data-layer") == "15"
    before = len(wire.sent)
    assert before > 0  # the socket is watched (the page's first run sent frames)
    ax.locator('[data-step="1"]').click()  # layer 16
    assert ax.get_attribute("data-layer") == "16"
    canvas = ax.locator("canvas.ax-map")
    box = canvas.bounding_box()
    rows = 9 + 2  # a blank row between the three key/value groups
    for head, drawn_row, key in [(0, 0, 0), (4, 5, n - 1), (8, 10, 2)]:
        x = box["x"] + (key + 0.5) * box["width"] / n
        y = box["y"] + (drawn_row + 0.5) * box["height"] / rows
        page.mouse.move(x, y)
        tip = ax.locator(".ax-tip")
        assert tip.text_content().startswith(f"head {head} (H{head} · KV{head // 3})")
        got = float(tip.get_attribute("data-value"))
        assert got == pytest.approx(float(gen.last.pattern_lhk[16, head, key]), abs=1e-7)
    page.wait_for_timeout(300)
    assert len(wire.sent) == before  # the layer changed in the browser alone: no frame sent
