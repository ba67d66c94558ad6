"""The notebook widget's module in Debian's Chromium, loaded the way anywidget loads it
(tests/explorer/widget_page.py: a small stand-in for anywidget's model whose ``send`` is
answered by a real ``Explorer.reply`` in this process, so every number the page draws is the
engine's). Checked: it draws, keys move the head and layer
through set + save_changes, a kernel-side change redraws it, and the cell arithmetic's share
equals the engine's pattern."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from explorer import Explorer
from scripts.live_app import CHROMIUM
from tests.explorer.widget_page import SYNCED, WAIT_MS, asked, widget_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists() and not os.environ.get("CI"),
        reason=f"{CHROMIUM} not installed (./test.sh installs it)",
    ),
]

TEXT = "the river bank was muddy"
PATTERN_MAP = "figure.ax-panel[data-stage=pattern] canvas.ax-map"
INKED = f"""() => {{
    const c = document.querySelector('{PATTERN_MAP}');
    if (!c || !c.width || !c.height) return false;
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const colours = new Set();
    for (let i = 0; i < d.length; i += 4) colours.add(d.slice(i, i + 4).join());
    return colours.size > 1;
}}"""


@pytest.fixture(params=["smollm2", "minilm"])
def widget(request):
    return Explorer(TEXT, model=request.param)


@pytest.fixture
def view(browser, widget):
    """A page showing ``widget``'s module over the stand-in model, drawn."""
    with widget_page(browser, widget, INKED) as page:
        yield page


def _model(page, name: str):
    return page.evaluate("(name) => window.model.get(name)", name)


def _title(page) -> str:
    return page.locator(".ax-title").text_content() or ""


def _cell_centre(page, q: int, k: int) -> tuple[float, float]:
    """Where the pattern panel draws query ``q``, key ``k`` (rows are queries)."""
    canvas = page.locator(PATTERN_MAP)
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    cols, rows = canvas.evaluate("(c) => [c.width, c.height]")
    return box["x"] + (k + 0.5) * box["width"] / cols, box["y"] + (q + 0.5) * box["height"] / rows


def test_it_draws_the_tokens_and_a_pattern(view, widget):
    page = view
    assert page.evaluate(INKED)
    labels = page.locator("figure.ax-panel[data-stage=pattern] .ax-rows span").all_text_contents()
    assert labels == widget.header["tokens"]
    assert _title(page).startswith("layer 0, head 0")
    sent = page.evaluate("window.model.log.sent")
    assert asked(sent, 0, "scores")


def test_keys_move_the_head_and_layer_through_set_and_save_changes(view, widget):
    page = view
    page.focus(".ax")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => window.model.get('head') === 1", timeout=WAIT_MS)
    page.keyboard.press("ArrowDown")
    page.wait_for_function("() => window.model.get('layer') === 1", timeout=WAIT_MS)
    page.wait_for_function(
        "() => window.model.log.saves.some((s) => s.layer === 1)", timeout=WAIT_MS
    )
    saves = page.evaluate("window.model.log.saves")
    assert any(s.get("head") == 1 for s in saves), saves
    assert _title(page).startswith("layer 1, head 1")
    page.wait_for_function(INKED, timeout=WAIT_MS)
    sent = page.evaluate("window.model.log.sent")
    assert asked(sent, 1, "scores")


def test_a_kernel_side_change_redraws_it(view, widget):
    page = view
    before = len(page.evaluate("window.model.log.saves"))
    page.evaluate("window.pyChange({layer: 3, head: 2})")
    page.wait_for_function(
        "() => document.querySelector('.ax-title').textContent.startsWith('layer 3, head 2')",
        timeout=WAIT_MS,
    )
    page.wait_for_function(INKED, timeout=WAIT_MS)
    assert asked(page.evaluate("window.model.log.sent"), 3, "scores")
    echoed = page.evaluate("window.model.log.saves")[before:]
    assert all(s.items() <= {"layer": 3, "head": 2}.items() for s in echoed), echoed  # no fight


def test_the_cell_arithmetic_shows_the_engines_pattern(view, widget):
    page = view
    layer, head, q, k = 2, 1, 3, 2
    page.evaluate(f"window.pyChange({{layer: {layer}, head: {head}, q: {q}, k: {k}}})")
    page.wait_for_function(
        f"""() => {{
            const box = document.querySelector('.ax-cell');
            if (!box || !box.dataset.cell) return false;
            const c = JSON.parse(box.dataset.cell);
            return c.query === {q} && c.key === {k} &&
                document.querySelector('.ax-title').textContent.startsWith('layer {layer}');
        }}""",
        timeout=WAIT_MS,
    )
    cell = json.loads(page.locator(".ax-cell").get_attribute("data-cell"))
    want = float(widget.trace.pattern_lhqk[layer][head][q, k])
    assert abs(cell["share"] - want) <= 1e-6, (cell["share"], want)
    shown = page.locator(".ax-cell .ax-n-share").text_content() or ""  # For engineers
    assert abs(float(shown.rsplit("= ", 1)[1]) - want) <= 1e-6, shown
    plain = page.locator(".ax-cell .ax-n-plain-2").text_content() or ""  # everyone's: 3 decimals
    assert plain.endswith(f"this is the weight “{widget.header['tokens'][k]}” gets."), plain
    assert abs(float(plain.split(":")[0].removeprefix("= ")) - want) <= 5e-4 + 1e-9, plain


def test_a_click_picks_the_cell_and_hover_shows_the_engines_weight(view, widget):
    page = view
    q, k = 3, 1
    want = float(widget.trace.pattern_lhqk[0][0][q, k])
    page.mouse.move(*_cell_centre(page, q, k))
    tip = page.locator(".ax-tip")
    tip.wait_for(state="visible", timeout=WAIT_MS)
    assert abs(float(tip.get_attribute("data-value")) - want) <= 1e-6
    page.mouse.click(*_cell_centre(page, q, k))
    page.wait_for_function(
        f"() => window.model.log.saves.some((s) => s.q === {q} && s.k === {k})", timeout=WAIT_MS
    )
    assert (_model(page, "q"), _model(page, "k")) == (q, k)


def test_a_new_sentence_from_the_kernel_draws_its_tokens(view, widget):
    page = view
    before = widget.get_state()
    widget.text = "a new sentence for the widget"  # the kernel runs the new pass
    after = widget.get_state()
    changed = {name: after[name] for name in SYNCED if after[name] != before[name]}
    assert {"text", "header"} <= changed.keys()
    page.evaluate("(changes) => window.pyChange(changes)", changed)
    labels = "figure.ax-panel[data-stage=pattern] .ax-rows span"
    page.wait_for_function(
        f"(n) => document.querySelectorAll('{labels}').length === n",
        arg=widget.header["n_tokens"],
        timeout=WAIT_MS,
    )
    page.wait_for_function(INKED, timeout=WAIT_MS)
    assert page.locator(labels).all_text_contents() == widget.header["tokens"]
