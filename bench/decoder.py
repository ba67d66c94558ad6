"""``python -m bench decoder [--repeats N]``: SmolLM2 in the running app, against its targets.

Starts ``streamlit run app.py`` on 127.0.0.1 and drives Debian's Chromium as a person would:
  new prompt   /pattern?model=smollm2 open on a short prompt; type a new 128-token one (never
               seen, so never cached) and time Enter → the explorer's first chart on screen
               (timed in the page, as ``bench app`` times MiniLM). Target p50 ≤ 1.0 s.
  step         /generate with a ~100-token prompt; click "Next token" and time the click → the
               new token's attention chart redrawn. Target p50 ≤ 200 ms.
  memory       the server's resident memory once both models have served a page. Target ≤ 1.2 GB.
  floor        in the same run, a bare Streamlit page (bench/floor_app.py): a slider → one Plotly
               heatmap redrawn, what any Streamlit + Plotly rerun costs here.

The engine alone (forward against transformers, load, a step without the page, a trace's bytes)
is ``python -m bench llama``. A benchmark, not a test: figures are printed, never asserted; the
load average is printed first and last (these machines are shared).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from urllib.parse import quote_plus

from attention_core import load_model
from bench.explorer import (
    FIRST_DRAW,
    PATH_SEGMENTS,
    WAIT_MS,
    open_instrumented,
    path_of,
    settle,
    try_timed,
)
from bench.live import has_chart, measure, rss_mb, type_sentence
from bench.report import fmt_s, load, p50, p95, progress, table, verdict
from bench.sentences import sentence
from scripts.live_app import launch_chromium, streamlit_server

NEW_PROMPT_S = 1.0  # p50, Enter → first chart at 128 tokens
STEP_S = 0.200  # p50, click → the new token's attention drawn, at ~100 tokens of context
RSS_MB = 1200  # one process with both models loaded
# The step view (explorer/step.js, in a shadow root): how many tokens it drew, and when.
STEP_VIEW = """() => {
  for (const host of document.querySelectorAll('[data-testid="stBidiComponentIsolated"]')) {
    const ax = host.shadowRoot && host.shadowRoot.querySelector('.ax-step');
    if (ax && ax.dataset.n) return ax;
  }
  return null;
}"""
STEP_N = f"() => Number(({STEP_VIEW})()?.dataset.n || 0)"
# A person's click on "Next token", timed in the page (Playwright's own click first waits for
# the button to be stable and scrolls: tens of ms that are not the app's).
CLICK = """() => {
  const button = [...document.querySelectorAll('button')]
    .find((b) => b.innerText.trim() === 'Next token');
  const t = performance.now();
  button.click();
  return t;
}"""


def new_prompts(browser, url, texts: Sequence[str]) -> tuple[list[float], list[list[float]]]:
    """Seconds from Enter to the explorer's chart on screen, one per new text (None dropped),
    and where each went (bench.explorer's PATH_SEGMENTS)."""
    page, wire = open_instrumented(browser, url)
    first = quote_plus("The capital of France is")
    page.goto(f"{url}/pattern?model=smollm2&layer=0&head=0&s={first}", timeout=WAIT_MS)
    page.wait_for_function(FIRST_DRAW, timeout=WAIT_MS, polling="raf")
    settle(page, WAIT_MS / 1000)
    times, paths = [], []
    for text in texts:
        move = try_timed(page, wire, type_sentence(page, text), "sentence", url.pid, "new prompt")
        if move:
            times.append(move.drawn_s)
            paths += [path] if (path := path_of(move.raw)) else []
    page.context.close()
    return times, paths


def steps(browser, url, prompt: str, count: int) -> tuple[list[float], list[float]]:
    """Seconds from a click on "Next token" to the step view drawn with the new token (polled
    each animation frame), and to the end of the run the click started."""
    from bench.live import open_page

    page, wire = open_page(browser, url)
    page.goto(f"{url}/generate", timeout=WAIT_MS)
    has_chart(page, wire, 60)
    box = page.get_by_label("Prompt")
    box.fill(prompt)
    box.press("Enter")
    page.wait_for_timeout(500)
    has_chart(page, wire, 60)
    page.wait_for_function(f"() => ({STEP_N})() > 0", timeout=WAIT_MS)
    times, done = [], []
    for _ in range(count):
        n, mark, t0 = page.evaluate(STEP_N), wire.mark(), time.monotonic()
        clicked = page.evaluate(CLICK)
        page.wait_for_function(
            f"(n) => ({STEP_N})() === n + 1", arg=n, polling="raf", timeout=WAIT_MS
        )
        drawn = float(page.evaluate(f"() => ({STEP_VIEW})().dataset.drawnAt"))
        times.append((drawn - clicked) / 1000)
        finished = wire.wait_finished(page, mark, t0 + WAIT_MS / 1000)
        done += [finished - t0] if finished is not None else []
        page.wait_for_timeout(300)  # the bars chart settles before the next click
    page.context.close()
    return times, done


def floor(browser, count: int) -> list[float]:
    """Seconds from a slider key to the bare page's heatmap redrawn (bench/floor_app.py)."""
    from bench.floor import FLOOR_APP
    from bench.live import head_walk, open_page

    with streamlit_server(timeout=120, script=FLOOR_APP) as url:
        page, wire = open_page(browser, url)
        page.goto(f"{url}/?n=12", timeout=WAIT_MS)
        has_chart(page, wire, 60)
        times = []
        for name, key in head_walk(count):
            slider = page.get_by_role("slider", name=name)
            slider.focus()
            sample = measure(page, wire, lambda s=slider, k=key: s.press(k), 0)
            times += [sample.chart_s] if sample.chart_s is not None else []
        page.context.close()
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench decoder", description=__doc__)
    parser.add_argument("--repeats", type=int, default=5, help="prompts and steps to time")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    model = load_model("smollm2")
    texts = [sentence(model, 128, 92 + r) for r in range(args.repeats)]
    prompt = sentence(model, 100, 3)
    print(f"load average before: {load()}")
    with streamlit_server() as url, sync_playwright() as pw:
        browser = launch_chromium(pw)
        started = time.monotonic()
        prompts, paths = new_prompts(browser, url, texts)
        progress(f"new prompts: {len(prompts)}/{len(texts)} drawn")
        step_s, step_done = steps(browser, url, prompt, args.repeats)
        progress(f"steps: {len(step_s)}/{args.repeats} drawn")
        rss, peak = rss_mb(url.pid)
        floor_s = floor(browser, args.repeats)
        browser.close()
        elapsed = time.monotonic() - started
    rows = [
        [
            "new prompt → first chart, 128 tokens (p50 / p95)",
            f"{fmt_s(prompts)} / {fmt_s(prompts, p95)}",
            f"p50 ≤ {NEW_PROMPT_S:.1f} s",
            verdict(p50(prompts) if prompts else None, NEW_PROMPT_S),
        ],
        [
            "generation step, click → drawn, ~100 tokens (p50 / p95)",
            f"{fmt_s(step_s)} / {fmt_s(step_s, p95)}",
            f"p50 ≤ {STEP_S * 1000:.0f} ms",
            verdict(p50(step_s) if step_s else None, STEP_S),
        ],
        ["  the step's run, click → script finished (p50)", fmt_s(step_done), "", ""],
        [
            "the floor: a bare Streamlit page, slider → one Plotly heatmap (p50)",
            fmt_s(floor_s),
            "",
            "",
        ],
        [
            "server memory with both models (now / peak)",
            f"{rss:.0f} / {peak:.0f} MB",
            f"≤ {RSS_MB} MB",
            verdict(peak, RSS_MB),
        ],
    ]
    table("SmolLM2 in the app", ["what", "measured", "target", ""], rows)
    if paths:
        segments = [[name, fmt_s([p[i] for p in paths])] for i, name in enumerate(PATH_SEGMENTS)]
        table("Where a new prompt's time goes (p50 per segment)", ["segment", "p50"], segments)
    print(f"{elapsed:.0f} s; load average after: {load()}")
    return 0
