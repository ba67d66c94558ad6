"""Soak: one server, one Chromium page, many distinct sentences through every page; does the
server's memory stay bounded and flat?

``python -m bench soak [--sentences 200] [--pages pattern,all_heads] [--every 20]``

Sentence i has 5-512 tokens (a deterministic spread, ``bench.app.sentence``), each opened on
every page by URL (``?s=...``, a new session each time); a page counts as drawn at its first
Plotly chart or explorer axis (``.ax[data-drawn]``), or after 30 s (counted as a timeout).
Every ``--every`` sentences, once the last page has finished its run, it prints the server's
resident memory (VmRSS). The server runs a copy of the working tree taken at the start (other
people's edits mid-run would otherwise mix old modules with new page scripts), and its output
is kept in a log whose errors are counted. Verdict: the peak is
at most 700 MB, and the readings over the last half of the run (the last 100 of 200 sentences)
are flat: their least-squares trend rises at most 50 MB per 100 sentences (their spread, printed
too, is mostly what the byte-budgeted trace store holds when each reading is taken).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ui import registry  # noqa: E402 - after the path above

PAGES = tuple(p.url_path for p in registry.PAGES)  # "" is Start here
LIMIT_MB = 700
FLAT_MB = 50  # the most the last half's trend may rise per 100 sentences
DRAWN = ".js-plotly-plot .main-svg, .ax[data-drawn]"
PAGE_TIMEOUT_MS = 30_000
ERROR = "[data-testid=stException]"


def snapshot(dest: Path) -> Path:
    """Copy the working tree's files (tracked and untracked, not ignored) into ``dest``."""
    names = (
        subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, names):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def drain(pid: int, log: Path) -> threading.Thread:
    """Keep reading the server's stdout pipe into ``log`` (nobody else reads it: a full pipe
    would block the server's logging)."""

    def run() -> None:
        with open(f"/proc/{pid}/fd/1", "rb") as pipe, log.open("wb") as out:
            while chunk := pipe.read1(65536):
                out.write(chunk)
                out.flush()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """Resident memory now (VmRSS), or its peak so far (``field="VmHWM"``), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def lengths(n: int) -> list[int]:
    """n token counts spread over 5-512 (a fixed stride through the range, so runs repeat)."""
    return [5 + (i * 197) % 508 for i in range(n)]


def flat(readings: list[tuple[int, float]]) -> tuple[bool, float, float]:
    """Flat = no growth: the least-squares line through the (sentence, MB) readings rises at most
    FLAT_MB per 100 sentences. Also returns their spread (max - min), which is mostly what the
    trace store holds at the moment of reading (0 to its budget, by design, as the sentences'
    lengths vary), not growth."""
    xs = [float(n) for n, _ in readings]
    ys = [mb for _, mb in readings]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    var = sum((x - mean_x) ** 2 for x in xs)
    slope = (
        sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / var if var else 0
    )
    return slope * 100 <= FLAT_MB, slope * 100, max(ys) - min(ys)


def visit(page, url: str) -> str:
    """Open ``url``: "drawn" once it has drawn, "error" if Streamlit shows an exception, else
    "timeout" after the bounded wait."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.goto(url, wait_until="domcontentloaded", timeout=PAGE_TIMEOUT_MS)
        page.locator(f"{DRAWN}, {ERROR}").first.wait_for(state="attached", timeout=PAGE_TIMEOUT_MS)
    except PlaywrightTimeout:
        return "timeout"
    return "error" if page.locator(ERROR).count() else "drawn"


def settle(page) -> None:
    """Let the page finish its run (bounded), so a reading is not taken mid-computation."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    from scripts.live_app import wait_idle

    try:
        wait_idle(page, PAGE_TIMEOUT_MS)
        time.sleep(1)
    except PlaywrightTimeout:
        pass


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench soak", description=__doc__)
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument(
        "--pages",
        default=",".join(p or "home" for p in PAGES),
        help="comma-separated, 'home' for /",
    )
    parser.add_argument("--every", type=int, default=20, help="sentences between readings")
    args = parser.parse_args(argv)
    pages = ["" if p == "home" else p for p in args.pages.split(",") if p]

    from playwright.sync_api import sync_playwright

    from attention_core import load_model
    from bench.sentences import sentence
    from scripts.live_app import launch_chromium, streamlit_server

    model = load_model(None)
    texts = [sentence(model, n, i % 110) for i, n in enumerate(lengths(args.sentences))]
    assert len(set(texts)) == len(texts), "sentences must be distinct"
    del model

    readings: list[tuple[int, float]] = []
    highs: list[float] = []  # VmHWM at each reading: the peak so far
    growth = dict.fromkeys(pages, 0.0)  # RSS change summed over each page's visits
    failed = {kind: dict.fromkeys(pages, 0) for kind in ("timeout", "error")}
    print(f"soak: {len(texts)} sentences × {len(pages)} pages, reading every {args.every}")
    tmp = Path(tempfile.mkdtemp(prefix="soak-"))
    tree, log = snapshot(tmp / "tree"), tmp / "server.log"
    with streamlit_server(script=tree / "app.py") as url, sync_playwright() as pw:
        drain(url.pid, log)
        browser = launch_chromium(pw)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        start = time.monotonic()
        print(f"  server up, RSS {rss_mb(url.pid):.0f} MB")
        for i, text in enumerate(texts, 1):
            drawn = 0
            for name in pages:
                before = rss_mb(url.pid)
                outcome = visit(page, f"{url}/{name}?s={quote(text)}")
                if outcome == "drawn":
                    drawn += 1
                else:
                    failed[outcome][name] += 1
                growth[name] += rss_mb(url.pid) - before
            if i % args.every == 0 or i == len(texts):
                settle(page)
                readings.append((i, rss_mb(url.pid)))
                high = rss_mb(url.pid, "VmHWM")
                highs.append(high)
                print(
                    f"  after {i:4d} sentences ({lengths(i)[-1]:3d} tokens last): RSS "
                    f"{readings[-1][1]:6.0f} MB (peak so far {high:.0f}), "
                    f"{time.monotonic() - start:6.0f} s, not drawn: "
                    f"{sum(failed['timeout'].values())} in 30 s, "
                    f"{sum(failed['error'].values())} errors",
                    flush=True,
                )
            if not drawn:
                print(f"  no page drew sentence {i}: the server is broken, stopping; its log:")
                print(log.read_text(errors="replace")[-3000:])
                break
        browser.close()
    shutil.rmtree(tree, ignore_errors=True)
    print(
        "  RSS change summed by page: "
        + ", ".join(f"/{name} {mb:+.0f} MB" for name, mb in growth.items())
    )
    for kind, counts in failed.items():
        if any(counts.values()):
            print(f"  {kind}: " + ", ".join(f"/{n} {c}" for n, c in counts.items() if c))
    print(f"  server log: {log}")
    values = [mb for _, mb in readings]
    if not values:
        return 1
    last = [(n, mb) for n, mb in readings if n >= len(texts) // 2] or readings[-1:]
    is_flat, rise, spread = flat(last)
    peak = max(values + highs)  # the highest resident set at any moment, not only at readings
    ok = peak <= LIMIT_MB and is_flat
    print(
        f"verdict: {'PASS' if ok else 'FAIL'}: peak {peak:.0f} MB (limit {LIMIT_MB}); over the "
        f"last half ({len(last)} readings) the trend rises {rise:+.0f} MB per 100 sentences "
        f"(flat means <= {FLAT_MB}); their spread {spread:.0f} MB"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
