"""A head switch is drawn by the browser alone: the live app's /pattern in Debian's Chromium, at
512 tokens (the largest view). Websocket frames are counted in the page (an init script wraps
``WebSocket.send``) at the key press, at the redraw (the explorer's ``data-drawn`` changed) and
at the next animation frame (the new canvas on screen): no frame goes to the server before
the switch is on screen, and the server does hear of it afterwards (the debounced tell).
Frames are counted, never timed."""

from __future__ import annotations

import os
import time
from pathlib import Path
from urllib.parse import quote_plus

import pytest

from scripts.live_app import CHROMIUM, streamlit_server, wait_idle

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists() and not os.environ.get("CI"),
        reason=f"{CHROMIUM} not installed (./test.sh installs it)",
    ),
]

LONG = " ".join(["the river bank was muddy after the rain"] * 80)  # cut to 512 tokens
WAIT_MS = 60_000
PRESSES = 3

# Counts frames sent; logs each key press and each redraw of an explorer view with the count at
# that moment, and at the animation frame after the redraw.
COUNT = """(() => {
  if (window.__sw || window.top !== window) return;
  const S = (window.__sw = { sent: 0, keys: [], draws: [] });
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    send(data) {
      S.sent += 1;
      return super.send(data);
    }
  };
  window.addEventListener("keydown", () => S.keys.push(S.sent), true);
  const attach = Element.prototype.attachShadow;
  Element.prototype.attachShadow = function (init) {
    const root = attach.call(this, init);
    new MutationObserver((records) => {
      for (const r of records) {
        if (r.target.classList.contains("ax-heads")) continue;
        const title = r.target.querySelector(".ax-title");
        const draw = { at: S.sent, frame: null, title: title ? title.textContent : "" };
        S.draws.push(draw);
        requestAnimationFrame(() => { draw.frame = S.sent; });
      }
    }).observe(root, { subtree: true, attributes: true, attributeFilter: ["data-drawn"] });
    return root;
  };
})()"""

LOG = "() => JSON.parse(JSON.stringify(window.__sw))"
# The last draw has reached its animation frame, and it came after the `n`-th key press.
ON_SCREEN = """(n) => { const S = window.__sw, last = S.draws[S.draws.length - 1];
  return S.keys.length >= n && !!last && last.frame !== null; }"""


@pytest.fixture(scope="module")
def app():
    with streamlit_server(timeout=120) as url:
        yield url


def quiet(page, timeout_s: float = 30.0) -> None:
    """No frame sent for 1.5 s (the tell of the last draw, ~350 ms after it, has gone) and the
    app runs no script."""
    deadline = time.monotonic() + timeout_s
    sent = page.evaluate("window.__sw.sent")
    while True:
        page.wait_for_timeout(1500)
        now = page.evaluate("window.__sw.sent")
        if now == sent:
            break
        assert time.monotonic() < deadline, "the page kept sending frames"
        sent = now
    wait_idle(page, WAIT_MS)


def test_no_websocket_frame_before_a_head_switch_is_on_screen_at_512_tokens(app, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.add_init_script(COUNT)
        page.goto(f"{app}/pattern?layer=1&head=0&s={quote_plus(LONG)}", timeout=WAIT_MS)
        page.wait_for_function(
            "() => !!window.__sw && window.__sw.draws.some((d) => d.frame !== null)",
            timeout=WAIT_MS,
        )
        wait_idle(page, WAIT_MS)
        quiet(page)
        for press in range(1, PRESSES + 1):
            page.locator(".ax:not(.ax-heads)").last.focus()
            before = page.evaluate(LOG)
            page.keyboard.press("ArrowRight")
            page.wait_for_function(ON_SCREEN, arg=len(before["keys"]) + 1, timeout=WAIT_MS)
            log = page.evaluate(LOG)
            key_at = log["keys"][len(before["keys"])]
            draws = log["draws"][len(before["draws"]) :]
            assert draws, "no redraw after the key press"
            assert draws[0]["title"] == f"layer 1, head {press}"
            assert key_at == before["sent"]
            assert draws[0]["at"] == key_at, "a frame went to the server before the redraw"
            assert draws[0]["frame"] == key_at, "a frame went out before the switch was on screen"
            quiet(page)  # and the server does hear of the switch, after it is on screen
            assert page.evaluate("window.__sw.sent") > key_at, "the server was never told"
    finally:
        context.close()
