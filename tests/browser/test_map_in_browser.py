"""Map mode in Debian's Chromium: a long SmolLM2 text in the notebook widget's module (loaded the
way anywidget loads it, tests/explorer/widget_page.py, answered by a real ``Explorer.reply`` in
this process, which serves the same ``pack_map.head_block`` as the app's route).

Checked: the map draws pooled without the roles (asked for after the first chart, the heading's
badge filled in when they come) (a cell = a 2 × 2 block of 700 tokens), the pooled read-out names
its block and its numbers equal the mean and max of the engine's pattern over the cells the
mask keeps; a wheel zoom fetches full-resolution tiles, and the read-out of a zoomed cell is the
engine's float32 exactly; a head switch asks for the new head's map."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest

import explorer.notebook
from attention_core import trace_sentence
from attention_core.methods.pack import head_badges
from attention_core.methods.rollout import trace_rollout_pooled
from explorer import Explorer
from tests.explorer.widget_page import WAIT_MS, widget_page

pytestmark = pytest.mark.browser

N = 700  # tokens kept: past pack_map.MAP_FROM (512)
TEXT = " ".join(
    f"Line {i}: the river bank near mill {i % 7} was muddy after the rain, "
    f"and the miller counted {i * 3} sacks."
    for i in range(30)
)
MAP = "figure.ax-panel[data-stage=pattern] canvas.ax-map"
DRAWN = f"""(want) => {{
    const c = document.querySelector('{MAP}');
    return !!c && c.width === want && !document.querySelector('.ax-status').textContent;
}}"""


@pytest.fixture(scope="module")
def widget():
    # SmolLM2's config still cuts at 512 tokens while its cap is being raised to 2,048: the
    # widget's pass keeps N tokens (the same engine call, a longer cut).
    patch = pytest.MonkeyPatch()
    patch.setattr(
        explorer.notebook, "trace_sentence", functools.partial(trace_sentence, max_tokens=N)
    )
    try:
        yield Explorer(TEXT, model="smollm2", stages=["pattern", "rollout"], layer=3, head=2)
    finally:
        patch.undo()


def centre(page, r: int, c: int) -> tuple[float, float]:
    """A point of the pattern panel's cell (r, c), rows and columns of what is shown (the image
    fills the canvas's content box, inside its border)."""
    return tuple(
        page.locator(MAP).evaluate(
            """(m, [r, c]) => {
                const box = m.getBoundingClientRect();
                const [w, h] = [box.width - 2 * m.clientLeft, box.height - 2 * m.clientTop];
                // A whole pixel inside the cell: a mouse event's clientX/Y are whole pixels,
                // and a long sentence's cells are under two pixels wide.
                const inside = (start, i, size, count) =>
                  Math.ceil(start + (i * size) / count + 0.01);
                return [
                  inside(box.left + m.clientLeft, c, w, m.width),
                  inside(box.top + m.clientTop, r, h, m.height),
                ];
            }""",
            [r, c],
        )
    )


def readout(page) -> dict:
    return json.loads(page.locator(".ax-cell").get_attribute("data-cell") or "{}")


def pooled(pattern_qk: np.ndarray, r0: int, r1: int, c0: int, c1: int) -> tuple[float, float]:
    """The mean and max of a block over the cells the causal mask keeps (key ≤ query)."""
    kept = [pattern_qk[q, k] for q in range(r0, r1) for k in range(c0, c1) if k <= q]
    return float(np.mean(np.asarray(kept, np.float64))), float(max(kept))


def test_the_map_pools_zooms_into_tiles_and_reads_the_engines_numbers(browser, widget):
    assert widget.header["n_tokens"] == N and widget.header["map"]["side"] == 512
    pattern_qk = np.asarray(widget.trace.pattern_lhqk[3, 2])
    with widget_page(browser, widget, f"() => ({DRAWN})(350)") as page:
        sent = page.evaluate("window.model.log.sent")
        assert any(m.get("part") == "map" and m.get("window") == [0, N, 0, N] for m in sent)
        assert not any(m.get("part") in ("scores", "qk") for m in sent)  # no layer of n²
        # The roles were not in the header (the first chart never waits for them): asked for
        # once it was drawn, and the heading's badge is filled in when they come.
        assert "roles" not in widget.header
        page.wait_for_function(
            "() => document.querySelector('.ax-role').textContent !== ''", timeout=120_000
        )
        assert page.locator(".ax-role").text_content() == head_badges(widget.trace)[3][2]
        page.mouse.click(*centre(page, 300, 120))  # tokens 600–601 × 240–241
        page.wait_for_function("() => document.querySelector('.ax-cell').dataset.cell")
        cell = readout(page)
        assert cell["block"] == 2 and cell["tokens"] == {"r0": 600, "r1": 602, "c0": 240, "c1": 242}
        mean, high = pooled(pattern_qk, 600, 602, 240, 242)
        assert (
            abs(cell["pattern"]["mean"] - mean) <= 1e-6
            and abs(cell["pattern"]["max"] - high) <= 1e-6
        )
        text = page.locator(".ax-cell").text_content() or ""
        assert "tokens 600–601 × 240–241: mean" in text, text
        rollout = trace_rollout_pooled(widget.trace).rollout_lqk[3][300, 120]  # block means
        assert cell["rollout"] == {"mean": float(rollout), "max": None}

        page.mouse.move(*centre(page, 300, 120))
        page.mouse.wheel(0, -100)  # halves the window around the pointer: 350 tokens a side
        page.wait_for_function(
            f"() => ({DRAWN})(350) && !!document.querySelector('.ax-hint')"
            ".textContent.startsWith('Showing tokens')",
            timeout=WAIT_MS,
        )
        sent = page.evaluate("window.model.log.sent")
        tiles = [m for m in sent if m.get("part") == "tile"]
        assert tiles and all(m["window"][1] - m["window"][0] <= 256 for m in tiles)
        hint = page.locator(".ax-hint").text_content() or ""
        r0, c0 = (
            int(side.split("–")[0]) for side in hint.removeprefix("Showing tokens ").split(" × ")
        )
        page.mouse.click(*centre(page, 10, 7))
        page.wait_for_function(
            "() => JSON.parse(document.querySelector('.ax-cell').dataset.cell || '{}').block === 1"
        )
        cell = readout(page)
        q, k = r0 + 10, c0 + 7
        assert (cell["query"], cell["key"]) == (q, k)
        assert cell["pattern"]["value"] == float(pattern_qk[q, k])  # the engine's float32

        page.focus(".ax")
        page.keyboard.press("ArrowRight")
        page.wait_for_function("() => window.model.get('head') === 3", timeout=WAIT_MS)
        page.wait_for_function(f"() => ({DRAWN})(350)", timeout=WAIT_MS)
        sent = page.evaluate("window.model.log.sent")
        assert any(m.get("part") == "tile" and m.get("head") == 3 for m in sent)
