"""Soak: one server, one Chromium page, many distinct sentences through every page; does the
server's memory stay bounded and flat?

``python -m bench soak [--sentences 200] [--pages pattern,all_heads] [--every 20]``

Sentence i has 5-512 tokens (a deterministic spread, ``bench.app.sentence``), each opened on
every page by URL (``?s=...``, a new session each time); a page counts as drawn at its first
Plotly chart or explorer axis (``.ax[data-drawn]``), or after 30 s (counted as a timeout).
Every ``--every`` sentences it prints the server's resident memory (VmRSS). Verdict: the peak is
at most 700 MB, and the readings over the last half of the run (the last 100 of 200 sentences)
are flat: max - min <= max(10 % of their min, 50 MB).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PAGES = (
    "", "pattern", "all_heads", "values", "embedding_shift", "hide_word", "build_head",
    "compare", "learn",
)  # fmt: skip
LIMIT_MB = 700
FLAT_FRACTION, FLAT_MB = 0.10, 50
DRAWN = ".js-plotly-plot .main-svg, .ax[data-drawn]"
PAGE_TIMEOUT_MS = 30_000


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def lengths(n: int) -> list[int]:
    """n token counts spread over 5-512 (a fixed stride through the range, so runs repeat)."""
    return [5 + (i * 197) % 508 for i in range(n)]


def flat(readings: list[float]) -> tuple[bool, float]:
    spread = max(readings) - min(readings)
    return spread <= max(FLAT_FRACTION * min(readings), FLAT_MB), spread


def visit(page, url: str) -> bool:
    """Open ``url``; True once it has drawn, False after the bounded wait."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.goto(url, wait_until="domcontentloaded", timeout=PAGE_TIMEOUT_MS)
        page.locator(DRAWN).first.wait_for(state="attached", timeout=PAGE_TIMEOUT_MS)
        return True
    except PlaywrightTimeout:
        return False


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench soak", description=__doc__)
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--pages", default=",".join(p or "home" for p in PAGES),
                        help="comma-separated, 'home' for /")  # fmt: skip
    parser.add_argument("--every", type=int, default=20, help="sentences between readings")
    args = parser.parse_args(argv)
    pages = ["" if p == "home" else p for p in args.pages.split(",") if p]

    from playwright.sync_api import sync_playwright

    from attention_core import load_model
    from bench.app import sentence
    from scripts.live_app import launch_chromium, streamlit_server

    model = load_model(None)
    texts = [sentence(model, n, i % 110) for i, n in enumerate(lengths(args.sentences))]
    assert len(set(texts)) == len(texts), "sentences must be distinct"
    del model

    readings: list[tuple[int, float]] = []
    growth = dict.fromkeys(pages, 0.0)  # RSS change summed over each page's visits
    timeouts = dict.fromkeys(pages, 0)
    print(f"soak: {len(texts)} sentences × {len(pages)} pages, reading every {args.every}")
    with streamlit_server() as url, sync_playwright() as pw:
        browser = launch_chromium(pw)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        start = time.monotonic()
        print(f"  server up, RSS {rss_mb(url.pid):.0f} MB")
        for i, text in enumerate(texts, 1):
            for name in pages:
                before = rss_mb(url.pid)
                if not visit(page, f"{url}/{name}?s={quote(text)}"):
                    timeouts[name] += 1
                growth[name] += rss_mb(url.pid) - before
            if i % args.every == 0 or i == len(texts):
                readings.append((i, rss_mb(url.pid)))
                print(f"  after {i:4d} sentences ({len(text.split()):3d} words last): RSS "
                      f"{readings[-1][1]:6.0f} MB, {time.monotonic() - start:6.0f} s, "
                      f"{sum(timeouts.values())} pages not drawn in 30 s", flush=True)  # fmt: skip
        browser.close()
    print("  RSS change summed by page: " + ", ".join(
        f"/{name} {mb:+.0f} MB" for name, mb in growth.items()))  # fmt: skip
    if any(timeouts.values()):
        print("  not drawn in 30 s: " + ", ".join(f"/{n} {c}" for n, c in timeouts.items() if c))
    values = [mb for _, mb in readings]
    last = [mb for n, mb in readings if n > len(texts) // 2] or values[-1:]
    is_flat, spread = flat(last)
    peak = max(values)
    ok = peak <= LIMIT_MB and is_flat
    print(f"verdict: {'PASS' if ok else 'FAIL'}: peak {peak:.0f} MB (limit {LIMIT_MB}); over the "
          f"last half, {len(last)} readings spread {spread:.0f} MB (flat means <= "
          f"max({FLAT_FRACTION:.0%} of their min, {FLAT_MB} MB))")  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
