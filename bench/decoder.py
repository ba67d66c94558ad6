"""``python -m bench decoder [--repeats N]``: SmolLM2 in the running app, against its targets.

Starts ``streamlit run server.py`` on 127.0.0.1 and drives Debian's Chromium as a person would:
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
from bench.app import sentence
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
from scripts.live_app import launch_chromium, streamlit_server

NEW_PROMPT_S = 1.0  # p50, Enter → first chart at 128 tokens
STEP_S = 0.200  # p50, click → the new token's attention drawn, at ~100 tokens of context
RSS_MB = 1200  # one process with both models loaded
GEN_CHART = 1  # /generate's charts: 0 the guesses, 1 the new token's heads × earlier tokens


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
            paths += [path] if (path := path_of(move)) else []
    page.context.close()
    return times, paths


def steps(browser, url, prompt: str, count: int) -> tuple[list[float], list[float]]:
    """Seconds from a click on "Next token" to the new token's chart redrawn, and to the end of
    the run the click started."""
    from bench.live import open_page

    page, wire = open_page(browser, url)
    page.goto(f"{url}/generate", timeout=WAIT_MS)
    has_chart(page, wire, 60)
    box = page.get_by_label("Prompt")
    box.fill(prompt)
    box.press("Enter")
    page.wait_for_timeout(500)
    has_chart(page, wire, 60)
    button = page.get_by_role("button", name="Next token")
    times, done = [], []
    for _ in range(count):
        sample = measure(page, wire, button.click, GEN_CHART)
        if sample.chart_s is not None:
            times.append(sample.chart_s)
        if sample.done_s is not None:
            done.append(sample.done_s)
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
        ["new prompt → first chart, 128 tokens (p50 / p95)",
         f"{fmt_s(prompts)} / {fmt_s(prompts, p95)}", f"p50 ≤ {NEW_PROMPT_S:.1f} s",
         verdict(p50(prompts) if prompts else None, NEW_PROMPT_S)],
        ["generation step, click → drawn, ~100 tokens (p50 / p95)",
         f"{fmt_s(step_s)} / {fmt_s(step_s, p95)}", f"p50 ≤ {STEP_S * 1000:.0f} ms",
         verdict(p50(step_s) if step_s else None, STEP_S)],
        ["  the step's run, click → script finished (p50)", fmt_s(step_done), "", ""],
        ["the floor: a bare Streamlit page, slider → one Plotly heatmap (p50)", fmt_s(floor_s),
         "", ""],
        ["server memory with both models (now / peak)", f"{rss:.0f} / {peak:.0f} MB",
         f"≤ {RSS_MB} MB", verdict(peak, RSS_MB)],
    ]  # fmt: skip
    table("SmolLM2 in the app", ["what", "measured", "target", ""], rows)
    if paths:
        segments = [[name, fmt_s([p[i] for p in paths])] for i, name in enumerate(PATH_SEGMENTS)]
        table("Where a new prompt's time goes (p50 per segment)", ["segment", "p50"], segments)
    print(f"{elapsed:.0f} s; load average after: {load()}")
    return 0
