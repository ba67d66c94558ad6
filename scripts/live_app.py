"""Start the app with `streamlit run` on loopback and drive it with Debian's Chromium.

Shared by the browser tests, the README screenshot script and the app benchmark. Servers listen
on 127.0.0.1 only; every wait is bounded in time.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Playwright

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]


class ServerUrl(str):
    """The server's base URL (a plain str) that also knows its process id and start time."""

    pid: int
    started: float  # time.monotonic() just before the process was spawned


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def streamlit_server(
    port: int | None = None, timeout: float = 180.0, script: Path = ROOT / "app.py"
) -> Iterator[ServerUrl]:
    """Run `streamlit run app.py` (or ``script``) on 127.0.0.1; yield its base URL; stop it on
    exit."""
    port = port or free_port()
    env = {
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MALLOC_ARENA_MAX": "2",  # run.sh
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    }
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(script),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
    ]
    started = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    url = ServerUrl(f"http://127.0.0.1:{port}")
    url.pid, url.started = proc.pid, started
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                said = proc.stdout.read().decode() if proc.stdout else ""
                raise RuntimeError(f"streamlit exited: {said[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"streamlit did not answer on {url} within {timeout} s")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def launch_chromium(playwright: Playwright) -> Browser:
    """Debian's Chromium under Playwright (never a downloaded browser)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def wait_for_charts(page: Page, count: int = 1, timeout_ms: int = 60_000) -> None:
    """Wait until ``count`` Plotly charts have drawn and Streamlit has stopped running."""
    page.wait_for_function(
        f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {count}",
        timeout=timeout_ms,
    )
    wait_idle(page, timeout_ms)


# A run is over when the status widget is gone and no element is left from the run before:
# Streamlit marks each element it has not yet rewritten with data-stale="true" while a script
# runs, and the widget itself only shows after a short delay, so the widget alone can report
# "idle" while the old page's elements are still being replaced.
_IDLE = (
    "!document.querySelector('[data-testid=\"stStatusWidget\"]')"
    " && !document.querySelector('[data-stale=\"true\"]')"
)


def wait_idle(page: Page, timeout_ms: int = 60_000) -> None:
    """Wait until the app has finished its script run and replaced every element of the last."""
    page.wait_for_function(_IDLE, timeout=timeout_ms)
