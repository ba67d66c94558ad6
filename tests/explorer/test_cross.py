"""Cross-attention's mount data (``explorer.streamlit_adapter.cross_data``): every layer's and
head's pattern over the span as float32, exactly; bad shapes refused. And in Chromium, the
assembled module alone (no server) redrawing a 40-token × 1500-frame pattern on each head
switch, the time printed (the budget is 50 ms; not asserted)."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import numpy as np
import pytest

from explorer.bundle import module
from explorer.streamlit_adapter import cross_data
from scripts.live_app import CHROMIUM

ORIGIN = "http://cross.test/"
VIEW = {"layer": 3, "head": 0, "token": 2}


def _pattern(t: int, f: int) -> np.ndarray:
    raw = np.random.default_rng(0).random((4, 6, t, f), dtype=np.float32)
    return raw / raw.sum(-1, keepdims=True)


def test_the_pattern_goes_as_float32_every_layer_and_head():
    pattern = _pattern(5, 250)
    data = cross_data(pattern, list("abcde"), 40, VIEW | {"extra": 1}, "clip", [(3, 0), (2, 5)])
    sent = np.frombuffer(base64.b64decode(data["pattern"]), dtype="<f4").reshape(4, 6, 5, 250)
    np.testing.assert_array_equal(sent, pattern)
    assert (data["mode"], data["n_layers"], data["n_heads"], data["n_frames"]) == (
        "cross",
        4,
        6,
        250,
    )
    assert data["view"] == VIEW and data["first"] == 40 and data["named"] == [[3, 0], [2, 5]]
    json.dumps(data)  # JSON-ready
    # a 5 s clip (250 frames) with 20 tokens: 4 × 6 × 20 × 250 floats, 0.48 MB (0.64 MB base64)
    assert len(cross_data(_pattern(20, 250), ["x"] * 20, 0, VIEW, "c")["pattern"]) == 640_000


@pytest.mark.parametrize("tokens", [list("abcd"), []])
def test_a_pattern_that_does_not_match_the_tokens_is_refused(tokens):
    with pytest.raises(ValueError, match="does not match"):
        cross_data(_pattern(len(tokens) + 1, 10), tokens, 0, VIEW, "c")


PAGE = """<!doctype html><html><body><div id="mount"></div><script type="module">
const url = URL.createObjectURL(new Blob([window.MODULE], { type: "text/javascript" }));
const { default: run } = await import(url);
run({ data: window.DATA, parentElement: document.getElementById("mount"),
      setStateValue: () => {}, setTriggerValue: () => {}, key: "cross" });
</script></body></html>"""


@pytest.mark.browser
@pytest.mark.skipif(
    not Path(CHROMIUM).exists() and not os.environ.get("CI"),
    reason=f"{CHROMIUM} not installed (./test.sh installs it)",
)
def test_a_head_switch_at_40_tokens_by_1500_frames_redraws_in_the_browser(browser):
    data = cross_data(_pattern(40, 1500), [f"t{i}" for i in range(40)], 0, VIEW, "c")
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.route(ORIGIN, lambda route: route.fulfill(body=PAGE, content_type="text/html"))
    page.add_init_script(f"window.MODULE = {json.dumps(module('streamlit'))};")
    page.add_init_script(f"window.DATA = {json.dumps(data)};")
    page.goto(ORIGIN)
    page.locator(".ax-cross[data-drawn='1']").wait_for(timeout=30_000)
    times = []
    for head in range(1, 6):
        page.keyboard.press("ArrowRight")
        page.locator(f".ax-cross[data-drawn='{head + 1}']").wait_for(timeout=30_000)
        times.append(float(page.locator(".ax-cross").get_attribute("data-draw-ms") or "nan"))
    view = json.loads(page.locator(".ax-cross").get_attribute("data-view") or "{}")
    assert view == {"layer": 3, "head": 5, "token": 2}
    with page.expect_download() as saved:  # the SVG: tokens and seconds as text
        page.locator(".ax-cross [data-export=svg]").click()
    svg = Path(saved.value.path()).read_text()
    assert svg.startswith("<svg") and ">t0</text>" in svg and ">0.00 s</text>" in svg
    print(f"\ncross-attention redraw at 40 × 1500: {', '.join(f'{t:.1f}' for t in times)} ms")
    page.close()
