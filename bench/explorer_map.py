"""``python -m bench explorer_map [--tokens 512,2048]``: the explorer's map mode in Chromium.

A long SmolLM2 text in the notebook widget's module, loaded the way anywidget loads it
(tests/explorer/widget_page.py: its messages answered by a real ``Explorer.reply`` in this
process, the same ``pack_map.head_block`` the app's route serves). Timed inside the page, from
the input event's own time (``event.timeStamp``: the key or the wheel) to the first animation
frame after the view's ``data-drawn`` changes:

- a head switch (→), after the view's prefetch (the neighbouring heads) has settled;
- a zoom into a new window (the wheel over a place not seen yet), drawn from what the server
  sends for it (a pooled window, or full-resolution tiles once the block is one token).

Printed, never asserted (targets: a head switch ≤ 33 ms at 512 tokens, ≤ 100 ms at 2,048; a
zoom ≤ 100 ms). Each figure is the median of the runs, with the load average beside it.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import time
from typing import Any

import explorer.notebook
from attention_core import trace_sentence
from explorer import Explorer
from tests.explorer.widget_page import widget_page

RUNS = 9
TEXT = " ".join(
    f"Line {i}: the river bank near mill {i % 7} was muddy after the rain, "
    f"and the miller counted {i * 3} sacks of flour for the town."
    for i in range(120)
)
MAP = "figure.ax-panel[data-stage=pattern] canvas.ax-map"

# Input events' own times and each drawing's next animation frame, in the page's clock.
WATCH = """() => {
  const B = (window.__bench = { inputs: [], frames: [] });
  for (const type of ["keydown", "wheel"]) {
    window.addEventListener(type, (e) => B.inputs.push(e.timeStamp), true);
  }
  const root = document.querySelector(".ax");
  new MutationObserver(() => {
    const drawn = Number(root.dataset.drawn), early = Number(root.dataset.provisional || 0);
    requestAnimationFrame(() => B.frames.push({ drawn, early, t: performance.now() }));
  }).observe(root, { attributes: true, attributeFilter: ["data-drawn", "data-provisional"] });
}"""

# Time from the last input to the first frame after a drawing past `drawn` (the sharp view),
# or null; and to the first frame of any drawing (a zoom drawn from the cells already here).
SINCE = """([drawn, early]) => {
  const B = window.__bench, t0 = B.inputs[B.inputs.length - 1];
  const after = B.frames.filter((f) => f.t >= t0);
  const hit = after.find((f) => f.drawn > drawn);
  const first = after.find((f) => f.drawn > drawn || f.early > early);
  return hit ? [hit.t - t0, first.t - t0] : null;
}"""

DRAWN = """() => [document.querySelector('.ax').dataset.drawn || 0,
  document.querySelector('.ax').dataset.provisional || 0].map(Number)"""
IDLE = """() => !document.querySelector('.ax-status').textContent"""


def widget_for(n: int) -> Explorer:
    """The explorer over the first ``n`` tokens of TEXT (SmolLM2's own cut may be lower)."""
    vars(explorer.notebook)["trace_sentence"] = functools.partial(trace_sentence, max_tokens=n)
    return Explorer(TEXT, model="smollm2", stages=["pattern"], layer=3, head=0)


def timed(page: Any, act: Any) -> tuple[float, float]:
    """Milliseconds from ``act()``'s input event to the frame that shows its sharp drawing,
    and to the first frame that shows anything of it."""
    before = page.evaluate(DRAWN)
    act()
    page.wait_for_function(f"() => ({SINCE})({before}) !== null", timeout=120_000)
    sharp, first = page.evaluate(SINCE, before)
    page.wait_for_function(IDLE, timeout=120_000)
    time.sleep(1.5)  # the prefetch after a drawing (neighbouring heads, tiles) settles
    return sharp, first


def cell_centre(page: Any, fx: float, fy: float) -> tuple[float, float]:
    box = page.locator(MAP).bounding_box()
    return box["x"] + fx * box["width"], box["y"] + fy * box["height"]


def measure(browser: Any, n: int) -> dict[str, list[tuple[float, float]]]:
    widget = widget_for(n)
    print(f"{widget.header['n_tokens']} tokens, map mode: {'map' in widget.header}", flush=True)
    out: dict[str, list[tuple[float, float]]] = {"head": [], "zoom": []}
    first = "() => Number(document.querySelector('.ax')?.dataset.drawn) > 0"
    with widget_page(browser, widget, first) as page:
        page.evaluate(WATCH)
        page.wait_for_function(IDLE, timeout=120_000)
        time.sleep(3)
        page.focus(".ax")
        head = widget.head
        for _ in range(RUNS):
            key = "ArrowRight" if head < widget.header["n_heads"] - 1 else "ArrowLeft"
            head += 1 if key == "ArrowRight" else -1
            out["head"].append(timed(page, lambda k=key: page.keyboard.press(k)))
        for run in range(RUNS if "map" in widget.header else 0):
            page.mouse.dblclick(*cell_centre(page, 0.5, 0.5))  # all again (cached)
            page.wait_for_function(IDLE, timeout=120_000)
            time.sleep(0.5)
            place = cell_centre(page, 0.1 + 0.09 * run, 0.95 - 0.05 * run)  # a place not seen
            page.mouse.move(*place)
            out["zoom"].append(timed(page, lambda: page.mouse.wheel(0, -100)))
    return out


def main(argv: list[str] | None = None) -> None:
    from playwright.sync_api import sync_playwright

    from scripts.live_app import CHROMIUM, CHROMIUM_ARGS

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", default="512,2048")
    args = parser.parse_args(argv)
    with sync_playwright() as play:
        browser = play.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for n in map(int, args.tokens.split(",")):
            got = measure(browser, n)
            load = os.getloadavg()[0]
            for what, runs in got.items():
                for i, kind in enumerate(("sharp", "first frame")):
                    ms = [run[i] for run in runs]
                    if not ms:
                        continue
                    line = ", ".join(f"{m:.0f}" for m in ms)
                    print(
                        f"{n} tokens, {what} ({kind}): p50 {statistics.median(ms):.1f} ms "
                        f"(runs: {line}; load average {load:.2f})",
                        flush=True,
                    )
        browser.close()


if __name__ == "__main__":
    main()
