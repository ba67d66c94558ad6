"""Regenerate the README screenshots: every page of the running app, in Debian's Chromium.

    .venv/bin/python -m scripts.screenshots [--out docs/screenshots]

Starts `streamlit run` on a free loopback port, opens each page on a preset sentence, waits for
its charts, and writes one PNG per page.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from urllib.parse import urlencode

from playwright.sync_api import sync_playwright

from scripts.live_app import ROOT, launch_chromium, streamlit_server, wait_idle

# (file name, url_path, URL parameters, how many charts to wait for)
SHOTS = [
    ("home", "", {"s": "The river bank was muddy"}, 0),
    ("learn", "learn", {"s": "The river bank was muddy", "step": "6"}, 1),
    ("pattern", "pattern", {"s": "I made a deposit at the bank", "layer": "2", "head": "0"}, 4),
    ("all_heads", "all_heads", {"s": "The river bank was muddy"}, 1),
    ("values", "values", {"s": "dirty quantum plumbing", "layer": "0", "head": "3"}, 1),
    ("embedding_shift", "embedding_shift", {"s": "The river bank was muddy", "layer": "5"}, 1),
    ("build_head", "build_head", {"s": "the fluffy blue creature roamed the verdant forest"}, 1),
    ("compare", "compare", {"layer": "4"}, 2),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=1100)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with streamlit_server() as url, sync_playwright() as pw:
        browser = launch_chromium(pw)
        page = browser.new_page(viewport={"width": args.width, "height": args.height})
        for name, path, query, charts in SHOTS:
            page.goto(f"{url}/{path}?{urlencode(query)}")
            if charts:
                page.wait_for_function(
                    "n => document.querySelectorAll('.js-plotly-plot .main-svg').length >= n",
                    arg=charts,
                    timeout=90_000,
                )
            page.wait_for_function(  # the sidebar drawn, no lazy widget still a placeholder
                'document.querySelector(\'[data-testid="stSidebar"] input[type="text"]\')'
                " && !document.querySelector('[data-testid=\"stSkeleton\"]')",
                timeout=90_000,
            )
            wait_idle(page, 90_000)
            page.wait_for_timeout(800)  # let Plotly finish its transitions
            page.screenshot(path=str(out / f"{name}.png"))
            print(f"{name}: {out / f'{name}.png'}")
        browser.close()


if __name__ == "__main__":
    main()
