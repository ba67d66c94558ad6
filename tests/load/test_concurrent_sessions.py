"""Many users at once: 20 browser sessions on one `streamlit run` server, each with its own
sentence, each doing 10 slider moves on the pattern page.

Every chart a session receives (each plotly spec in its websocket stream, and the tick labels
drawn on its page after every move) must show its own sentence's tokens, never another
session's; no session may see an exception or a page error. The test reports the per-move
latency (keypress to the server's "script finished", and to the redrawn page) and the server's
memory (VmRSS) from a bare server, after the first session (app imported, model loaded), and at
the peak; it asserts that the load adds less than 300 MB over that warm baseline. Bounded: every
wait has a timeout and the whole run is cut off after RUN_LIMIT_S seconds.

Run: ``pytest -m load -s tests/load`` (about 4 minutes on 2 cores: the 20 pages' 200 chart
redraws cost the browser about 1 s of CPU each, the server about 0.3 s per move).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote_plus

import numpy as np
import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from attention_core import tokenize
from scripts.live_app import CHROMIUM, launch_chromium, streamlit_server

pytestmark = [
    pytest.mark.load,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} not installed"),
    # The pattern page's stages are now drawn in the browser by the attention explorer: no Plotly
    # spec travels per move and the temperature is no server slider, so this test's moves and
    # its leak check (Plotly specs in the websocket stream) no longer exercise the page. Issue 14
    # rebuilds it (30 sessions through serve.sh, moves in the explorer, new sentences).
    pytest.mark.skip(reason="to be rebuilt for the explorer under issue 14 (see module note)"),
]

N_SESSIONS = 20
MOVES = [  # (slider, key): 10 moves from layer 2, head 0, temperature 1.0
    ("Head", "ArrowRight"), ("Head", "ArrowRight"), ("Layer", "ArrowRight"),
    ("Softmax temperature", "ArrowRight"), ("Head", "ArrowRight"), ("Layer", "ArrowLeft"),
    ("Head", "ArrowLeft"), ("Softmax temperature", "ArrowRight"), ("Layer", "ArrowRight"),
    ("Head", "ArrowRight"),
]  # fmt: skip
STEP = {"Layer": 1, "Head": 1, "Softmax temperature": 0.05}
WAIT_MS = 90_000  # one wait (a page load or one move) on a busy 2-core machine
ARRIVING_AT_ONCE = 4  # page loads in flight together; all 20 then move at the same time
NUDGE_AFTER_S = 8.0  # see _settled
RUN_LIMIT_S = 360  # the whole load run (about 2 min on a quiet 2-core machine)
RSS_LIMIT_MB = 300


def sentence(i: int) -> str:
    # over 12 tokens, so the heatmaps skip per-cell numbers: a redraw then costs the browser
    # about a quarter less, and 200 redraws in 20 pages are most of this test's CPU time
    return f"session {i} says hello to the attention heads of this small model"


@dataclass
class Session:
    """What one browser session saw."""

    index: int
    tokens: list[str]
    loaded: bool = False  # its first page is drawn
    nudges: int = 0  # times its page had to be brought to the front to draw
    finished: int = 0  # "script finished" messages received
    finished_at: float = 0.0  # time.monotonic() when the last one arrived
    charts_checked: int = 0  # plotly specs received and checked
    foreign: list[str] = field(default_factory=list)  # anything that was not its own sentence
    errors: list[str] = field(default_factory=list)
    server_s: list[float] = field(default_factory=list)  # keypress -> script finished
    page_s: list[float] = field(default_factory=list)  # keypress -> page redrawn, labels checked

    def on_frame(self, payload: bytes | str) -> None:
        """Read one websocket message from the server to this session."""
        if isinstance(payload, str):
            return
        msg = ForwardMsg.FromString(payload)
        kind = msg.WhichOneof("type")
        if kind == "script_finished":
            self.finished += 1
            self.finished_at = time.monotonic()
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            which = element.WhichOneof("type")
            if which == "exception":
                self.errors.append(f"exception: {element.exception.message[:200]}")
            elif which == "plotly_chart":
                self._check_chart(json.loads(element.plotly_chart.spec))

    def _check_chart(self, spec: dict) -> None:
        self.charts_checked += 1
        ticks = spec.get("layout", {}).get("xaxis", {}).get("ticktext")
        if ticks != self.tokens:
            self.foreign.append(f"chart with ticks {ticks}")


def rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024


def cpu_s(pid: int) -> float:
    """User + system CPU seconds the process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


PAGE_STATE = """(title) => ({
    title: Array.from(document.querySelectorAll('h1'), h => h.textContent)
        .some(t => t.includes(title)),
    running: !!document.querySelector('[data-testid="stStatusWidget"]'),
    errors: document.querySelectorAll('[data-testid="stException"]').length,
    labels: Array.from(document.querySelectorAll('.js-plotly-plot'),
        p => Array.from(p.querySelectorAll('.xtick text'), t => t.textContent)),
})"""  # one round trip per poll: the title, running or not, error boxes, every chart's labels


async def _wait_until(check, timeout_s: float, what: str, every_s: float = 0.05) -> None:
    """Poll ``check`` (a plain or async function) until it holds; TimeoutError after timeout_s."""
    deadline = time.monotonic() + timeout_s
    while not (await result if inspect.isawaitable(result := check()) else result):
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        await asyncio.sleep(every_s)


async def _settled(page, s: Session, title: str) -> None:
    """Wait until the page shows ``title``, has stopped running and draws 4 charts of its own
    sentence; labels of any other sentence seen on the way are recorded as foreign."""

    last: dict = {}

    async def ready() -> bool:
        state = last["state"] = await page.evaluate(PAGE_STATE, title)
        if state["errors"]:
            s.errors.append(f"{state['errors']} error box(es) on the page")
        for got in state["labels"]:
            if got and got != s.tokens and any(t.isdigit() for t in got):
                s.foreign.append(f"drawn labels {got}")
        labels = state["labels"]
        own = len(labels) >= 4 and all(got == s.tokens for got in labels[:4])
        return state["title"] and not state["running"] and own

    # Headless Chromium deprioritises pages that are not in front (their script chunks stop
    # loading, their charts stay skeletons) when the machine is busy; the server has answered by
    # then (its messages are checked in on_frame). A page that has not drawn after NUDGE_AFTER_S
    # is brought to the front, and the nudges are counted in the report.
    started = time.monotonic()

    async def ready_or_nudge() -> bool:
        if await ready():
            return True
        if time.monotonic() - started > NUDGE_AFTER_S * (s.nudges + 1):
            s.nudges += 1
            await page.bring_to_front()
        return False

    try:
        await _wait_until(ready_or_nudge, WAIT_MS / 1000, f"session {s.index}: {title!r}", 0.3)
    except TimeoutError:
        state = last.get("state", {})
        raise TimeoutError(f"session {s.index} never settled on {title!r}; last seen: title "
                           f"{state.get('title')}, running {state.get('running')}, labels "
                           f"{state.get('labels')}") from None  # fmt: skip


async def run_session(
    browser, url: str, s: Session, arriving: asyncio.Semaphore, start_gate: asyncio.Event
) -> None:
    context = await browser.new_context(viewport={"width": 1100, "height": 800})
    try:
        page = await context.new_page()
        page.set_default_timeout(WAIT_MS)
        page.on("pageerror", lambda err: s.errors.append(f"page error: {err}"))
        page.on("dialog", lambda d: (s.errors.append(f"dialog: {d.message}"), d.dismiss()))
        page.on("websocket", lambda ws: ws.on("framereceived", s.on_frame))
        async with arriving:  # visitors arrive a few at a time
            await page.goto(f"{url}/pattern?s={quote_plus(sentence(s.index))}")
            await _settled(page, s, "layer 2, head 0")
        s.loaded = True
        await start_gate.wait()  # every session loaded: now they all move at once
        layer, head, temp = 2, 0, 1.0
        for name, key in MOVES:
            sign = 1 if key == "ArrowRight" else -1
            if name == "Layer":
                layer += sign
            elif name == "Head":
                head += sign
            else:
                temp = round(temp + sign * STEP[name], 2)
            slider = page.get_by_role("slider", name=name)
            await slider.focus()
            before = s.finished
            started = time.monotonic()
            await slider.press(key)
            await _wait_until(lambda before=before: s.finished > before, WAIT_MS / 1000,
                              f"session {s.index}: no rerun after {name} {key}")  # fmt: skip
            s.server_s.append(s.finished_at - started)
            await _settled(page, s, f"layer {layer}, head {head}")
            s.page_s.append(time.monotonic() - started)
            if temp != 1.0 and f"temp={temp:g}" not in page.url:
                s.errors.append(f"URL lost the temperature: {page.url}")
            if f"s={quote_plus(sentence(s.index))}" not in page.url:
                s.foreign.append(f"URL of another sentence: {page.url}")
    finally:
        await context.close()


async def load_run(url: str, sessions: list[Session], pid: int) -> dict[str, float]:
    from playwright.async_api import async_playwright

    peak = 0.0

    async def sample() -> None:
        nonlocal peak
        while True:
            peak = max(peak, rss_mb(pid))
            await asyncio.sleep(0.5)

    async with async_playwright() as pw:
        browser = await launch_chromium(pw)
        try:
            gate = asyncio.Event()
            loaded: dict[str, float] = {}
            sampler = asyncio.create_task(sample())
            arriving = asyncio.Semaphore(ARRIVING_AT_ONCE)
            tasks = [
                asyncio.create_task(run_session(browser, url, s, arriving, gate)) for s in sessions
            ]

            async def open_gate_when_loaded() -> None:
                # the first page drawn: the model is loaded, the app imported (warm baseline)
                await _wait_until(
                    lambda: any(x.loaded for x in sessions) or any(t.done() for t in tasks),
                    RUN_LIMIT_S,
                    "none loaded",
                )
                loaded["first_rss"] = rss_mb(pid)
                # all loaded, or one failed (then the rest must not wait for it)
                await _wait_until(
                    lambda: all(x.loaded for x in sessions) or any(t.done() for t in tasks),
                    RUN_LIMIT_S,
                    "never loaded",
                )
                loaded["rss"], loaded["t"] = rss_mb(pid), time.monotonic()
                gate.set()

            opener = asyncio.create_task(open_gate_when_loaded())
            await asyncio.wait(tasks, timeout=RUN_LIMIT_S)
            opener.cancel()
            sampler.cancel()
            for s, task in zip(sessions, tasks, strict=True):
                if not task.done():
                    task.cancel()
                    s.errors.append(f"still running after {RUN_LIMIT_S} s ({len(s.page_s)} moves)")
                elif task.exception():
                    s.errors.append(f"{type(task.exception()).__name__}: {task.exception()}")
            await asyncio.gather(*tasks, return_exceptions=True)  # let cancelled ones close
        finally:
            await browser.close()
    return {"peak": max(peak, rss_mb(pid)), "loaded": loaded.get("rss", float("nan")),
            "first": loaded.get("first_rss", float("nan")),
            "moves_s": time.monotonic() - loaded.get("t", time.monotonic())}  # fmt: skip


def run_in_own_loop(coroutine):
    """asyncio.run in a thread of its own: the browser tests' session-wide sync Playwright keeps
    an event loop running in this thread when they ran first (as in the full suite)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result(timeout=RUN_LIMIT_S + 120)


def test_twenty_sessions_each_see_only_their_own_sentence(model, record_property):
    sessions = [Session(i, list(tokenize(model, sentence(i)).tokens)) for i in range(N_SESSIONS)]
    assert len({tuple(s.tokens) for s in sessions}) == N_SESSIONS  # all sentences differ
    started = time.monotonic()
    with streamlit_server(timeout=120) as url:
        pid = url.pid  # scripts.live_app.ServerUrl
        cold, cpu_before, load_before = rss_mb(pid), cpu_s(pid), os.getloadavg()[0]
        rss = run_in_own_loop(load_run(url, sessions, pid))
        end, cpu_used, load_after = rss_mb(pid), cpu_s(pid) - cpu_before, os.getloadavg()[0]
    duration = time.monotonic() - started

    server = np.array([x for s in sessions for x in s.server_s])
    page = np.array([x for s in sessions for x in s.page_s])
    figures = {
        "sessions": N_SESSIONS,
        "moves": int(page.size),
        "charts_checked": sum(s.charts_checked for s in sessions),
        "nudges": sum(s.nudges for s in sessions),
        "p50_server_s": float(np.percentile(server, 50)) if server.size else float("nan"),
        "p95_server_s": float(np.percentile(server, 95)) if server.size else float("nan"),
        "p50_page_s": float(np.percentile(page, 50)) if page.size else float("nan"),
        "p95_page_s": float(np.percentile(page, 95)) if page.size else float("nan"),
        "max_page_s": float(page.max()) if page.size else float("nan"),
        "rss_cold_mb": cold,  # the bare server, before the app's first run
        "rss_first_session_mb": rss["first"],  # app imported, model loaded: the warm baseline
        "rss_loaded_mb": rss["loaded"],  # all 20 sessions drawn
        "rss_peak_mb": rss["peak"],
        "rss_end_mb": end,
        "rss_growth_from_cold_mb": rss["peak"] - cold,
        "rss_growth_mb": rss["peak"] - rss["first"],  # what the other 19 and 200 moves added
        "moves_wall_s": rss["moves_s"],
        "server_cpu_s": cpu_used,
        "machine_load_1min_before": load_before,  # other work on the machine slows every figure
        "machine_load_1min_after": load_after,
        "duration_s": duration,
    }
    for name, value in figures.items():
        record_property(name, round(value, 3) if isinstance(value, float) else value)
    print("\nload test:", json.dumps({k: round(v, 3) for k, v in figures.items()}, indent=1))

    errors = [f"session {s.index}: {e}" for s in sessions for e in s.errors]
    foreign = [f"session {s.index}: {f}" for s in sessions for f in s.foreign]
    assert not errors, errors[:10]
    assert not foreign, foreign[:10]
    assert page.size == N_SESSIONS * len(MOVES)
    assert all(s.finished >= 1 + len(MOVES) for s in sessions)
    assert figures["charts_checked"] >= N_SESSIONS * 4  # every first draw was read and checked
    assert figures["rss_growth_mb"] < RSS_LIMIT_MB
