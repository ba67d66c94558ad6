"""A classroom behind ./serve.sh: two replicas behind HAProxy, and one of them dies mid-lesson.

Four browsers, each in its own context (so each holds its own HAProxy cookie), open four views
of their own (sentence, layer, head in the URL); the balancer spreads them over both replicas.
Then one replica's streamlit process is killed (SIGKILL, as a crash). Every page must reconnect
and show its own view again (title, sentence box, URL) with no error box and no lasting
"Connection error"; one of them makes its first move there with a slider, which must stick
(the new replica's session starts from the URL, but not over what the browser's widgets sent);
new visitors are served throughout; serve.sh starts the dead replica again;
and SIGTERM to serve.sh stops every process it started. Everything listens on 127.0.0.1; every
wait is bounded. Figures (start-up, reconnect) are printed: run with -s to see them.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote_plus

import pytest

from scripts.live_app import free_port, wait_idle
from scripts.serving import (
    Serve,
    http_status,
    parent_and_state,
    srv_cookie,
    start_serve,
    stop_serve,
    wait_until,
)

pytestmark = [pytest.mark.browser, pytest.mark.serve]

WAIT_MS = 60_000  # one page load or reconnection on a busy 2-core machine
RESTART_S = 60  # the dead replica must answer its health check again within this


@dataclass(frozen=True)
class View:
    path: str
    sentence: str
    layer: int
    head: int

    @property
    def query(self) -> str:
        return f"s={quote_plus(self.sentence)}&layer={self.layer}&head={self.head}"

    @property
    def title(self) -> str:
        if self.path == "pattern":  # the explorer shows layer and head itself, not in the title
            return "Attention pattern"
        return f"Value updates ΔE · layer {self.layer}, head {self.head}"


VIEWS = [  # layer 2 and head 0 are the defaults, which the app leaves out of the URL: not used
    View("values", "The river bank was muddy after the rain", 1, 2),
    View("values", "Dirty quantum plumbing leaks everywhere", 3, 5),
    View("pattern", "She deposited the cheque at the bank", 4, 7),
    View("values", "A small model reads every word twice", 5, 11),
]
NEWCOMER = View("values", "A late student joins the lesson", 0, 9)


def _seconds(values: list[float]) -> str:
    return ", ".join(f"{v:.1f}" for v in values)


def track_sockets(page) -> list[dict]:
    """Every websocket the page opens: when, and when it last got a frame from the server."""
    sockets: list[dict] = []

    def opened(ws) -> None:
        entry = {"opened": time.monotonic(), "last_frame": None}
        sockets.append(entry)
        ws.on("framereceived", lambda _frame: entry.update(last_frame=time.monotonic()))

    page.on("websocket", opened)
    return sockets


def answered(sockets: list[dict], opened_after: float, frame_after: float) -> bool:
    return any(s["opened"] > opened_after and (s["last_frame"] or 0) > frame_after for s in sockets)


def socket_opened(page, sockets: list[dict], after: float) -> float:
    """When the page opened a websocket after ``after`` (waits for one, bounded)."""

    def new() -> bool:
        return any(s["opened"] > after for s in sockets)

    assert wait_until(new, WAIT_MS / 1000, lambda: page.wait_for_timeout(100)), sockets
    return min(s["opened"] for s in sockets if s["opened"] > after)


def rerun(page, sockets: list[dict], opened_after: float, tries: int = 4) -> float:
    """Press "r", Streamlit's rerun key, until a websocket opened after ``opened_after`` answers
    (a press while the page is still reconnecting does nothing); return when it was pressed.

    A page that reconnects to a replica which does not know its session does not rerun by itself
    (Streamlit's frontend expects the same server to resume it): it keeps showing its last view,
    and its next action, any widget or this key, runs the page there, rebuilt from the URL."""
    for _ in range(tries):
        pressed = time.monotonic()
        page.locator("h1").first.click()  # the focus on the page, not in a text box
        page.keyboard.press("r")
        if wait_until(
            lambda pressed=pressed: answered(sockets, opened_after, pressed),
            10,
            lambda: page.wait_for_timeout(100),
        ):
            return pressed
    raise AssertionError(f"no answer to {tries} reruns: {sockets}")


def move_layer(page, sockets: list[dict], opened_after: float, key: str) -> float:
    """The page's first action on the new replica is the sidebar's Layer slider, one step
    (``key``; once the page has reconnected, so that the press is sent): that run starts a
    session there with the slider's new value, which must win over the URL's older one."""
    slider = page.get_by_role("slider", name="Layer")
    assert wait_until(
        lambda: any(s["opened"] > opened_after for s in sockets),
        WAIT_MS / 1000,
        lambda: page.wait_for_timeout(100),
    )
    page.get_by_text("Connecting").wait_for(state="hidden", timeout=WAIT_MS)
    pressed = time.monotonic()
    slider.focus()
    slider.press(key)
    assert wait_until(
        lambda: answered(sockets, opened_after, pressed),
        WAIT_MS / 1000,
        lambda: page.wait_for_timeout(100),
    ), sockets
    return pressed


def assert_shows(page, view: View) -> None:
    """The page shows its own view: title, sentence box, URL; no error box, no lost connection."""
    from playwright.sync_api import expect

    expect(page.locator("h1").filter(has_text=view.title)).to_have_count(1, timeout=WAIT_MS)
    wait_idle(page, WAIT_MS)
    box = page.get_by_role("textbox", name="Your sentence")
    expect(box).to_have_value(view.sentence, timeout=WAIT_MS)
    for part in view.query.split("&"):
        assert part in page.url, (part, page.url)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.get_by_text("Connection error").count() == 0


class Prober(threading.Thread):
    """New visitors without a cookie: GET / through HAProxy every 0.1 s (bounded count)."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url, self.stop, self.replies = url, threading.Event(), []

    def run(self) -> None:
        for _ in range(3000):  # at most 5 minutes
            self.replies.append(http_status(self.url))
            if self.stop.wait(0.1):
                return


def crash(serve: Serve, replica: int) -> tuple[int, int, float]:
    """SIGKILL to one replica's streamlit process, checked first to be serve.sh's child that
    listens on that replica's port (nothing else is touched); its pid, port and the kill time."""
    pid, port = serve.replicas()[replica]
    assert parent_and_state(pid)[0] == serve.proc.pid
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert str(port).encode() in cmdline and b"streamlit" in cmdline, cmdline
    killed = time.monotonic()
    os.kill(pid, signal.SIGKILL)
    return pid, port, killed


def open_view(browser, url: str):
    """A new visitor (own context, so own cookie) on ``url``: its context, page and sockets."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    sockets = track_sockets(page)
    page.goto(url, timeout=WAIT_MS)
    return context, page, sockets


def test_a_replica_dies_and_every_page_comes_back(browser, tmp_path, ready_timeout_s):
    port, launched = free_port(), time.monotonic()
    serve = start_serve(port, tmp_path / "serve.out")
    front, passed = f"http://127.0.0.1:{port}", False
    try:
        assert wait_until(
            lambda: "ready:" in serve.text() or serve.proc.poll() is not None, ready_timeout_s
        ), serve.text()
        assert serve.proc.poll() is None, serve.text()
        healthy_s = time.monotonic() - launched
        serve.remember_children()

        # The session's one Chromium (tests/conftest.py): Playwright's sync API runs one loop.
        visitors = [open_view(browser, f"{front}/{v.path}?{v.query}") for v in VIEWS]
        for (_, page, _), view in zip(visitors, VIEWS, strict=True):
            assert_shows(page, view)
        pinned = [srv_cookie(context) for context, _, _ in visitors]
        assert set(pinned) == {"r1", "r2"}, f"both replicas should have visitors: {pinned}"

        prober = Prober(f"{front}/")  # from before the crash, through it, until the end
        prober.start()
        victim, victim_port, killed = crash(serve, 1)
        newcomer, fresh, _ = open_view(browser, f"{front}/{NEWCOMER.path}?{NEWCOMER.query}")
        assert_shows(fresh, NEWCOMER)
        newcomer_s = time.monotonic() - killed

        reconnect_s, redraw_s = [], []
        # One page of the dead replica moves a slider as its first action on the new one.
        mover = next(i for i, v in enumerate(VIEWS) if pinned[i] == "r1" and v.path == "values")
        for i, ((_, page, sockets), view) in enumerate(zip(visitors, VIEWS, strict=True)):
            since = killed if pinned[i] == "r1" else 0.0  # pages on r2 keep their socket
            if since:
                reconnect_s.append(socket_opened(page, sockets, since) - killed)
            if i == mover:  # one step, not onto layer 2 (the default, left out of the URL)
                step = 1 if view.layer + 1 not in (2, 6) else -1
                pressed = move_layer(
                    page, sockets, since, "ArrowRight" if step > 0 else "ArrowLeft"
                )
                view = View(view.path, view.sentence, view.layer + step, view.head)
            else:
                pressed = rerun(page, sockets, since)
            assert_shows(page, view)
            redraw_s.append(time.monotonic() - pressed)
            page.screenshot(path=str(tmp_path / f"after-failover-{i}.png"))
        repinned = [srv_cookie(context) for context, _, _ in visitors]
        assert repinned == ["r2"] * len(VIEWS), f"pages should now be pinned to r2: {repinned}"
        prober.stop.set()
        prober.join(timeout=10)
        for context in [newcomer, *(context for context, _, _ in visitors)]:
            context.close()

        # serve.sh starts replica 1 again, on the same port, and it answers its health check
        assert wait_until(
            lambda: (
                serve.replicas()[1][0] != victim
                and http_status(f"http://127.0.0.1:{victim_port}/_stcore/health") == 200
            ),
            RESTART_S,
        ), serve.text()
        restarted_s = time.monotonic() - killed
        serve.remember_children()
        failed = [reply for reply in prober.replies if reply != 200]
        assert prober.replies and not failed, f"new visitors refused: {failed}"
        print(
            f"\nserve.sh --replicas 2 healthy {healthy_s:.1f} s after launch; pages on {pinned}; "
            f"after the kill: reconnected in {_seconds(reconnect_s)} s, redrawn "
            f"{_seconds(redraw_s)} s after a rerun; newcomer drawn {newcomer_s:.1f} s after the "
            f"kill; replica 1 healthy again after {restarted_s:.1f} s; {len(prober.replies)} "
            f"probes, all 200; screenshots in {tmp_path}"
        )
        passed = True
    finally:
        code, left = stop_serve(serve)
        if passed:
            shutil.rmtree(serve.run_dir(), ignore_errors=True)
    assert code == 0, f"serve.sh exited with {code} on SIGTERM:\n{serve.text()}"
    assert not left, f"serve.sh left these processes running (killed now): {left}"
    started = {victim} | {pid for pid, _ in serve.replicas().values()}
    assert started <= set(serve.seen), (started, serve.seen)  # all were checked to be gone
