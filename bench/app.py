"""``python -m bench app [--quick] [--repeats N]``: the running app, measured against its targets.

Starts ``streamlit run app.py`` on 127.0.0.1 (scripts/live_app.py), drives Debian's Chromium
with Playwright as a person would (open a link, press an arrow key, type a sentence) and prints
one markdown table per section, the target next to each figure: the floor of the stack (a bare
Streamlit + Plotly page, bench/floor.py), cold start, the attention explorer on /pattern (switches,
bytes, server CPU, a new sentence against BertViz and its profile: bench/explorer.py), all heads,
a new sentence on every page, server memory, and BertViz on the same sentences.

A benchmark, not a test: a missed target is reported, never raised. Every loop is bounded in
count and every wait in time. Timings, all from the key press (or Enter):
  request  the browser sent a request to the server (the rerun; the explorer's later "tell")
  chart    the interaction's main chart holds new data and is drawn (a Plotly chart polled each
           frame; the explorer's redraw timed in the page, to the next animation frame)
  done     the server's "script finished" message arrived (the whole page rerun)
  bytes    websocket payload bytes the page received from the press to "script finished", plus
           the explorer's HTTP block bytes

``--only floor,cold,explorer,all_heads,pages,memory,bertviz`` runs some sections. The server
inherits the environment, so ``OPENBLAS_NUM_THREADS=1 python -m bench app`` measures
single-threaded BLAS.
On a shared machine the load average (printed first and last) moves every timing.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from urllib.parse import quote_plus

from attention_core import Model, load_model
from bench.explorer import (
    FIRST,
    FIRST_DRAW,
    bench_explorer,
    has_drawn,
    measure_new_sentence,
    open_instrumented,
)
from bench.floor import bench_floor
from bench.live import (
    CHART_TIMEOUT_S,
    PLACEHOLDER_S,
    STAT_HEADER,
    has_chart,
    measure,
    rss_mb,
    stats_cols,
    type_sentence,
)
from bench.report import fmt_bytes, fmt_s, load, p50, p95, progress, table, verdict
from bench.sentences import SIZES, sentence
from scripts.live_app import launch_chromium, streamlit_server
from ui import registry

SECTIONS = ("floor", "cold", "explorer", "all_heads", "pages", "memory", "bertviz")

# Each page's main chart: the explorer's "sentence" view or "grid" (bench/explorer.py), else the
# index among its Plotly charts. (url_path, title, main chart) for every page but Start here.
MAIN_CHART: dict[str, str | int] = {"pattern": "sentence", "all_heads": "grid"}
PAGES = tuple((p.name, p.title, MAIN_CHART.get(p.name, 0)) for p in registry.PAGES[1:])


def bench_cold_start(browser, repeats: int) -> list[float]:
    """Prints the cold-start table; returns the seconds from spawn to the first draw."""
    rows = []
    for r in range(repeats):
        with streamlit_server(timeout=120) as url:
            ready = time.monotonic() - url.started
            page, wire = open_instrumented(browser, url)
            page.goto(f"{url}/pattern", timeout=CHART_TIMEOUT_S * 1000)
            page.wait_for_function(FIRST_DRAW, timeout=CHART_TIMEOUT_S * 1000, polling="raf")
            first = time.monotonic() - url.started
            ran = wire.wait_finished(page, (0, 0), time.monotonic() + CHART_TIMEOUT_S)
            page.wait_for_timeout(100)
            connected = wire.received[0][0] - url.started
            run = None if ran is None else ran - url.started
            total = sum(n for _, n, _ in wire.received)
            http = page.evaluate(FIRST)["before"]
            rows.append((ready, connected, run, first, total, http, rss_mb(url.pid)[0]))
            page.context.close()
        progress(f"cold start {r + 1}/{repeats}: {first:.2f} s")
    col = list(zip(*rows, strict=True))
    table(
        "Cold start: process start → first explorer draw on /pattern (default sentence)",
        [
            "repeats",
            "server ready",
            "page connected",
            "first run finished",
            "first draw p50",
            "p95",
            "ws bytes to first page",
            "HTTP block bytes before the draw",
            "RSS after",
            "target",
            "verdict",
        ],
        [
            [
                str(repeats),
                fmt_s(col[0]),
                fmt_s(col[1]),
                fmt_s(col[2]),
                fmt_s(col[3]),
                fmt_s(col[3], p95),
                fmt_bytes(p50(col[4])),
                fmt_bytes(p50(col[5])),
                f"{p50(col[6]):.0f} MB",
                "≤ 2 s",
                verdict(p50(col[3]), 2.0),
            ]
        ],
        "All columns are p50 seconds after the server process was spawned, a new server each "
        "repeat. Server ready = /_stcore/health answers (polled every 0.2 s); page connected = "
        'the first websocket message; first run finished = the server\'s "script finished" '
        "(model load, trace, the page); first draw = the explorer's first data-drawn, seen in the "
        "page at its next animation frame (after it fetched the shown layer's scores over HTTP).",
    )
    return list(col[3])


def bench_all_heads(browser, url, model: Model, repeats: int, sizes: Sequence[int]) -> dict:
    """A new sentence typed on /all_heads → the explorer's grid of every head redrawn (its
    data-drawn counts the layers drawn: 6 = done)."""
    rows, results = [], {}
    limits = {128: 1.0, 512: 3.0}
    for n in sizes:
        page, wire = open_instrumented(browser, url)
        page.goto(f"{url}/all_heads")
        if not has_drawn(page, "grid", PLACEHOLDER_S):
            rows.append([str(n), "0", *["n/a"] * 5, "", "n/a (no grid drawn)"])
            page.context.close()
            continue
        samples = [
            measure_new_sentence(
                page, wire, type_sentence(page, sentence(model, n, 1 + r)), "grid", url.pid
            )
            for r in range(repeats)
        ]
        page.context.close()
        results[n] = samples
        charts = [s.chart_s for s in samples if s.chart_s is not None]
        worst_bytes = max(s.bytes for s in samples)
        ok = charts and p50(charts) <= limits[n] and worst_bytes <= 5e6
        rows.append(
            [
                str(n),
                str(repeats),
                *stats_cols(samples),
                f"≤ {limits[n]:g} s, ≤ 5 MB",
                "n/a" if not charts else ("met" if ok else "MISSED"),
            ]
        )
        progress(f"all heads at {n} tokens: done")
    table(
        "All heads: a new sentence typed on /all_heads → every head of every layer drawn",
        ["tokens", *STAT_HEADER, "target (chart p50, bytes)", "verdict"],
        rows,
        "Includes the forward pass of the new sentence (not cached yet), every layer's scores "
        "fetched over HTTP (counted in bytes with the websocket's) and the thumbnails drawn in "
        "the browser; chart = the grid's data-drawn reached 6 layers (timed in the page).",
    )
    return results


def bench_new_sentence(browser, url: str, model: Model, repeats: int, n_tokens: int) -> None:
    """On every page: type a new sentence → the page's main chart redrawn."""
    rows, skipped = [], []
    for p, (path, title, chart) in enumerate(PAGES):
        page, wire = open_instrumented(browser, url)
        page.goto(f"{url}/{path}")
        explorer = isinstance(chart, str)
        if not (has_drawn(page, chart, PLACEHOLDER_S) if explorer else has_chart(page, wire)):
            skipped.append(title)
            page.context.close()
            continue
        label = "Sentence A" if path == "compare" else "Your sentence"
        samples = []
        for r in range(repeats):
            act = type_sentence(page, sentence(model, n_tokens, 11 + 8 * p + r), label)
            samples.append(
                measure_new_sentence(page, wire, act, chart, url.pid)
                if explorer
                else measure(page, wire, act, chart)
            )
        page.context.close()
        rows.append([f"{title} (/{path})", str(repeats), *stats_cols(samples)])
        progress(f"new sentence on /{path}: done")
    note = "The compare page reads its own Sentence A box (the sidebar sentence does not apply)."
    if skipped:
        note += (
            f" Skipped, no chart within {PLACEHOLDER_S:.0f} s (placeholder): {', '.join(skipped)}."
        )
    table(
        f"New sentence ({n_tokens} tokens, not cached) → each page's main chart",
        ["page", *STAT_HEADER],
        rows,
        note,
    )


def bench_sessions(browser, model: Model, after_runs: tuple[float, float], sessions: int) -> None:
    """A fresh server with ``sessions`` browser sessions open, each on its own sentence."""
    with streamlit_server(timeout=120) as url:
        pages = []
        for i in range(sessions):
            page, _ = open_instrumented(browser, url)
            page.goto(f"{url}/pattern?s={quote_plus(sentence(model, 128, 81 + i))}")
            page.wait_for_function(FIRST_DRAW, timeout=CHART_TIMEOUT_S * 1000, polling=100)
            pages.append(page)
        rss, peak = rss_mb(url.pid)
        for page in pages:
            page.context.close()
    table(
        "Server memory (VmRSS of the streamlit process)",
        ["when", "RSS", "peak RSS", "target", "verdict"],
        [
            [
                "after all the runs above (one server, 12–512-token sentences)",
                f"{after_runs[0]:.0f} MB",
                f"{after_runs[1]:.0f} MB",
                "",
                "",
            ],
            [
                f"fresh server, {sessions} sessions open on different 128-token sentences",
                f"{rss:.0f} MB",
                f"{peak:.0f} MB",
                "≤ 600 MB",
                verdict(rss, 600),
            ],
        ],
    )


def bench_bertviz(model: Model, sizes: Sequence[int], ours: dict, all_heads: dict) -> None:
    """BertViz head_view + model_view on the same sentences, next to our interactions."""
    try:
        from bench.peer import bertviz_render, load_peer
    except ImportError as err:
        table("BertViz comparison", ["status"], [[f"skipped: {err}"]])
        return
    t0 = time.monotonic()
    peer = load_peer()
    load_s = time.monotonic() - t0
    rows = []
    for n in sizes:
        seconds, n_bytes, n_tok = bertviz_render(peer, sentence(model, n))
        row, ratios = [str(n_tok), f"{seconds:.2f} s", fmt_bytes(n_bytes)], []
        for samples in (ours.get(n, []), all_heads.get(n, [])):
            times = [s.chart_s for s in samples if s.chart_s is not None]
            if not times:
                row += ["n/a"] * 3
                continue
            our_t, our_b = p50(times), p50([s.bytes for s in samples])
            ratios.append((seconds / our_t, n_bytes / our_b))
            row += [
                fmt_s([our_t]),
                fmt_bytes(our_b),
                f"{ratios[-1][0]:.1f}× / {ratios[-1][1]:.0f}×",
            ]
        met = ratios and all(min(r) >= 10 for r in ratios)
        rows.append([*row, "" if n != 128 else "n/a" if not ratios else "met" if met else "MISSED"])
        progress(f"BertViz at {n} tokens: {seconds:.1f} s")
    table(
        f"BertViz 1.4 (forward + head_view + model_view HTML; import and load {load_s:.1f} s)",
        [
            "tokens",
            "BertViz time",
            "BertViz HTML",
            "our head switch (explorer)",
            "bytes",
            "ratio t / size",
            "our all heads (new sentence)",
            "bytes",
            "ratio t / size",
            "≥ 10× both at 128",
        ],
        rows,
        "Ratio = BertViz ÷ ours (time, bytes), ours being p50 chart time and bytes from the "
        "sections above (a head switch's bytes: the later tell's rerun, nothing is fetched). "
        "BertViz (one process, no browser: its HTML is not even drawn) builds every head of every "
        "layer at once, then switches heads in the browser; the explorer too switches in the "
        "browser, from blocks fetched once per layer.",
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench app", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="one repeat; BertViz without 512")
    parser.add_argument("--repeats", type=int, default=None, help="repeats, 1-10 (default 3)")
    parser.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections")
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    if only - set(SECTIONS):
        parser.error(f"unknown sections {sorted(only - set(SECTIONS))}; choose from {SECTIONS}")
    repeats = max(1, min(args.repeats or (1 if args.quick else 3), 10))
    from playwright.sync_api import sync_playwright

    model = load_model()
    start = time.monotonic()
    print(f"# App benchmark ({repeats} repeats)")
    print(f"Load average at start (1/5/15 min, {os.cpu_count()} cores): {load()}", flush=True)
    heads, all_heads, after_runs = {}, {}, None
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            if "floor" in only:
                bench_floor(browser, repeats, {n: 3 * repeats for n in (12, 128)})
            if "cold" in only:
                bench_cold_start(browser, repeats)
            with streamlit_server(timeout=120) as url:
                if "explorer" in only:
                    heads = bench_explorer(browser, url, model, repeats).heads
                if "all_heads" in only:
                    all_heads = bench_all_heads(browser, url, model, repeats, (128, 512))
                if "pages" in only:
                    bench_new_sentence(browser, url, model, repeats, 128)
                after_runs = rss_mb(url.pid)
            if "memory" in only:
                bench_sessions(browser, model, after_runs, 10)
        finally:
            browser.close()
    if "bertviz" in only:
        bench_bertviz(model, SIZES[:2] if args.quick else SIZES, heads, all_heads)
    print(f"\nLoad average at end: {load()}. Total {time.monotonic() - start:.0f} s.")
    return 0
