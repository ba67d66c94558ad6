"""``python -m bench app --only floor``: the floor of Streamlit + Plotly on this machine.

bench/floor_app.py is the least a Streamlit page with a Plotly heatmap does (two sliders, one
heatmap, no model). Timed exactly as the app is (bench/app.py: cold start, slider arrow key →
heatmap redrawn), it shows which targets no Streamlit + Plotly page reaches here.
"""

from __future__ import annotations

import time

from bench.live import (
    CHART_TIMEOUT_S,
    STAT_HEADER,
    head_walk,
    measure,
    open_page,
    stats_cols,
    switch_target,
)
from bench.report import fmt_s, p50, p95, progress, table
from scripts.live_app import ROOT, streamlit_server, wait_for_charts

FLOOR_APP = ROOT / "bench" / "floor_app.py"


def bench_floor(browser, repeats: int, moves: dict[int, int]) -> dict:
    """Prints the floor's table; returns its figures: {"cold": [s], "switch": {n: [chart s]}}."""
    colds = []
    for r in range(repeats):
        with streamlit_server(timeout=120, script=FLOOR_APP) as url:
            page, _ = open_page(browser, url)
            page.goto(url, timeout=CHART_TIMEOUT_S * 1000)
            wait_for_charts(page, 1, timeout_ms=int(CHART_TIMEOUT_S * 1000))
            colds.append(time.monotonic() - url.started)
            page.context.close()
        progress(f"floor cold start {r + 1}/{repeats}: {colds[-1]:.2f} s")
    switches: dict[int, list[float]] = {}
    rows = [
        [
            "cold start (spawn → heatmap)",
            str(repeats),
            "",
            fmt_s(colds),
            fmt_s(colds, p95),
            "",
            "",
            "≤ 2 s (first heatmap)",
        ]
    ]
    with streamlit_server(timeout=120, script=FLOOR_APP) as url:
        for n, count in moves.items():
            page, wire = open_page(browser, url)
            page.goto(f"{url}/?n={n}")
            wait_for_charts(page, 1, timeout_ms=int(CHART_TIMEOUT_S * 1000))
            samples = []
            for name, key in head_walk(count):
                slider = page.get_by_role("slider", name=name)
                slider.focus()
                samples.append(measure(page, wire, lambda s=slider, k=key: s.press(k), chart=0))
            page.context.close()
            switches[n] = [s.chart_s for s in samples if s.chart_s is not None]
            label = f"slider → heatmap, {n}×{n}"
            rows.append([label, str(count), *stats_cols(samples), switch_target(n)])
            progress(f"floor slider at {n}: chart p50 {p50([s.chart_s for s in samples]):.3f} s")
    table(
        "Floor: a bare Streamlit page, two sliders and one Plotly heatmap (bench/floor_app.py)",
        ["what", *STAT_HEADER, "the app's target"],
        rows,
        "Timed as the app is, on the same machine in the same run. A target below the floor is "
        "out of reach of any page drawn by Streamlit and Plotly here, whatever the app does.",
    )
    return {"cold": colds, "switch": switches}
