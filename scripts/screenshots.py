"""Regenerate the README screenshots: every page of the running app, in Debian's Chromium.

    .venv/bin/python -m scripts.screenshots [--out docs/screenshots]

Starts `streamlit run app.py` on a free loopback port, opens each page on a preset sentence,
waits for its charts and attention explorers, and writes one PNG per page, one per tour step
(docs/screenshots/tour/) and the pattern page in the dark theme.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from urllib.parse import urlencode

from playwright.sync_api import Page, ViewportSize, sync_playwright

from scripts.live_app import ROOT, launch_chromium, streamlit_server, wait_idle

LONG_TEXT = (ROOT / "examples" / "long_text.txt").read_text(encoding="utf-8")  # the map's page
# (file name, url_path, URL parameters, Plotly charts and attention explorers to wait for)
Shot = tuple[str, str, dict[str, str], int, int]
SHOTS: list[Shot] = [
    ("home", "", {"s": "The river bank was muddy"}, 0, 1),
    ("notes", "notes", {}, 2, 0),
    ("learn", "learn", {"s": "The river bank was muddy", "step": "5"}, 0, 1),
    (
        "pattern",
        "pattern",
        {"s": "I made a deposit at the bank", "layer": "5", "head": "7", "q": "7", "k": "4"},
        0,
        1,
    ),
    ("all_heads", "all_heads", {"s": "The river bank was muddy"}, 0, 1),
    ("values", "values", {"s": "dirty quantum plumbing", "layer": "0", "head": "3"}, 3, 0),
    ("embedding_shift", "embedding_shift", {"s": "The river bank was muddy", "layer": "5"}, 1, 0),
    ("hide_word", "hide_word", {"s": "The river bank was muddy"}, 1, 0),
    ("beyond", "beyond", {"s": "The river bank was muddy"}, 0, 2),
    ("beyond_smollm2", "beyond", {"model": "smollm2", "s": "Jane visits Africa"}, 0, 2),
    ("build_head", "build_head", {"s": "the fluffy blue creature roamed the verdant forest"}, 2, 4),
    ("compare", "compare", {"layer": "4"}, 1, 2),
    (
        "pattern_smollm2",
        "pattern",
        {
            "model": "smollm2",
            "s": "dirty quantum plumbing",
            "layer": "12",
            "head": "4",
            "q": "4",
            "k": "0",
        },
        0,
        1,
    ),
    ("all_heads_smollm2", "all_heads", {"model": "smollm2", "s": "The river bank was muddy"}, 0, 1),
    ("decoder", "decoder", {"s": "dirty quantum plumbing"}, 4, 0),
    ("generate", "generate", {}, 1, 1),
    ("listen", "listen", {"lis_clip": "river"}, 3, 1),
    ("glossary", "glossary", {}, 0, 0),
    ("long_text", "long_text", {"model": "smollm2", "layer": "3", "head": "0"}, 3, 0),
    (
        "pattern_map",
        "pattern",
        {"model": "smollm2", "s": LONG_TEXT, "layer": "3", "head": "0"},
        0,
        1,
    ),
]
DARK = ("pattern_dark", "pattern", {"s": "The river bank was muddy", "layer": "1", "head": "9"})


def tour_shots() -> list[Shot]:
    """Every step of the guided tour on the river-bank sentence (charts: whatever it draws)."""
    from ui.tour import N_STEPS

    return [
        (f"tour/step_{k:02d}", "learn", {"s": "The river bank was muddy", "step": str(k)}, 0, 0)
        for k in range(1, N_STEPS + 1)
    ]


def shoot(page: Page, url: str, out: Path, shot: Shot) -> None:
    name, path, query, charts, views = shot
    page.goto(f"{url}/{path}?{urlencode(query)}")
    page.wait_for_function(  # the sidebar drawn, no lazy widget still a placeholder
        "document.querySelector('[data-testid=\"stSidebar\"]')"
        " && !document.querySelector('[data-testid=\"stSkeleton\"]')",
        timeout=180_000,
    )
    wait_idle(page, 180_000)
    if charts:
        page.wait_for_function(
            "n => document.querySelectorAll('.js-plotly-plot .main-svg').length >= n",
            arg=charts,
            timeout=180_000,
        )
    for i in range(views):  # each explorer has drawn (pierces its shadow root)
        page.locator(".ax[data-drawn]").nth(i).wait_for(timeout=180_000)  # a page: ~40 s
    page.wait_for_timeout(800)  # let Plotly finish its transitions
    path_out = out / f"{name}.png"
    path_out.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path_out), full_page=name.startswith("tour/"))
    print(f"{name}: {path_out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=1100)
    parser.add_argument("--only", default="", help="comma-separated shot names (default: all)")
    args = parser.parse_args()
    only = set(filter(None, args.only.split(",")))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    size = ViewportSize(width=args.width, height=args.height)
    with streamlit_server() as url, sync_playwright() as pw:
        browser = launch_chromium(pw)
        page = browser.new_page(viewport=size)
        for shot in [*SHOTS, *tour_shots()]:
            if not only or shot[0] in only:
                shoot(page, url, out, shot)
        if not only or DARK[0] in only:
            dark = browser.new_page(viewport=size, color_scheme="dark")
            shoot(dark, url, out, (*DARK, 0, 1))
        browser.close()


if __name__ == "__main__":
    main()
