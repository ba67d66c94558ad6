"""Cross-attention's mount data (``explorer.streamlit_adapter.cross_data``): the opening head
inline as float32, exactly, the others held by the process's bounded store
(``explorer.cross_store``) and served by its route (``server/cross_blocks.py``, also through
the app's ``ui.routes.ROUTES``); every head inline when nothing holds them; the sound pooled to
20 ms frames; bad shapes refused. And in Chromium, the assembled module alone (its route
answered by the same Python store): a head switch redrawn and fetched, the sound's columns over
the matrix's, a clip the server no longer holds said so in the view."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from starlette.applications import Starlette

from explorer import CSS
from explorer.bundle import module
from explorer.cross_store import CROSS_PATH, CrossStore, pattern_id
from explorer.page_token import mint
from explorer.streamlit_adapter import cross_data, pool_mel
from scripts.live_app import CHROMIUM
from server.cross_blocks import GONE, answer

ORIGIN = "http://cross.test/"
VIEW = {"layer": 3, "head": 0, "token": 2}


def _pattern(t: int, f: int, seed: int = 0) -> np.ndarray:
    raw = np.random.default_rng(seed).random((4, 6, t, f), dtype=np.float32)
    return raw / raw.sum(-1, keepdims=True)


def _floats(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype="<f4")


def test_only_the_opening_head_goes_inline_and_the_store_holds_every_head():
    pattern, store = _pattern(5, 250), CrossStore()
    data = cross_data(
        pattern, list("abcde"), 40, VIEW | {"extra": 1}, "clip", [(3, 0)], store=store
    )
    [[layer, head, rows]] = data["inline"]
    assert (layer, head) == (3, 0)
    np.testing.assert_array_equal(_floats(rows).reshape(5, 250), pattern[3, 0])
    assert data["store"] == pattern_id("clip", pattern) and store.keys() == [data["store"]]
    assert data["api"] == CROSS_PATH.lstrip("/") and "mel" not in data
    assert (data["mode"], data["n_layers"], data["n_heads"], data["n_frames"]) == (
        "cross",
        4,
        6,
        250,
    )
    assert data["view"] == VIEW and data["first"] == 40 and data["named"] == [[3, 0]]
    json.dumps(data)  # JSON-ready
    for la, h in [(0, 0), (2, 5), (3, 0)]:  # what the route sends is the head, exactly
        sent = answer(store, json.dumps({"id": data["store"], "layer": la, "head": h}).encode())
        assert sent.status_code == 200
        np.testing.assert_array_equal(
            np.frombuffer(sent.body, "<f4").reshape(5, 250), pattern[la, h]
        )


def test_without_a_store_every_head_goes_inline():
    pattern = _pattern(5, 250)
    data = cross_data(pattern, list("abcde"), 40, VIEW, "clip", store=None)
    assert data["store"] == "" and len(data["inline"]) == 24
    for layer, head, rows in data["inline"]:
        np.testing.assert_array_equal(_floats(rows).reshape(5, 250), pattern[layer, head])


def test_the_sound_is_the_log_mel_pooled_to_20_ms_and_sent_exactly():
    mel = np.random.default_rng(1).standard_normal((80, 3000)).astype(np.float32)
    pooled = pool_mel(mel, 40, 290)
    want = np.array(
        [[(mel[m, 2 * f] + mel[m, 2 * f + 1]) / 2 for f in range(40, 290)] for m in range(80)]
    )
    np.testing.assert_allclose(pooled, want, rtol=1e-6, atol=1e-7)
    assert pooled.dtype == np.float32 and pooled.shape == (80, 250)
    data = cross_data(_pattern(5, 250), list("abcde"), 40, VIEW, "c", mel_mf=pooled, store=None)
    np.testing.assert_array_equal(_floats(data["mel"]).reshape(80, 250), pooled)
    assert data["n_bins"] == 80
    with pytest.raises(ValueError, match="mel shape"):
        cross_data(_pattern(5, 250), list("abcde"), 40, VIEW, "c", mel_mf=pooled[:, 1:])
    with pytest.raises(ValueError, match="not inside"):
        pool_mel(mel, 1400, 1501)


@pytest.mark.parametrize("tokens", [list("abcd"), []])
def test_a_pattern_that_does_not_match_the_tokens_is_refused(tokens):
    with pytest.raises(ValueError, match="does not match"):
        cross_data(_pattern(len(tokens) + 1, 10), tokens, 0, VIEW, "c", store=None)


def test_the_store_is_bounded_by_bytes_least_recently_used_first_out():
    one = _pattern(5, 100)  # 48,000 bytes
    store = CrossStore(budget=3 * one.nbytes)
    keys = [f"clip{i}" for i in range(4)]
    for key in keys[:3]:
        assert store.put(key, one)
    assert store.head(keys[0], 0, 0) is not None  # clip0 is now the most recently used
    assert store.put(keys[3], one)  # so clip1 goes
    assert store.keys() == ["clip2", "clip0", "clip3"] and store.nbytes() == 3 * one.nbytes
    assert store.head("clip1", 0, 0) is None
    mine = _pattern(5, 100, seed=5)
    store.put("clip0", mine)  # held already: only its place in the order changes
    assert store.head("clip0", 0, 0) == one[0, 0].tobytes()
    assert store.put("copied", mine)
    mine[0, 0] = 0  # the store keeps its own copy: what it counts is what it holds
    assert store.head("copied", 0, 0) == _pattern(5, 100, seed=5)[0, 0].tobytes()
    assert store.keys() == ["clip3", "clip0", "copied"]
    assert not store.put("huge", _pattern(20, 100))  # larger than the whole budget: not held
    assert store.keys() == ["clip3", "clip0", "copied"]
    # cross_data then sends every head inline rather than a view that could not fetch them
    data = cross_data(_pattern(20, 100), ["x"] * 20, 0, VIEW, "huge", store=store)
    assert data["store"] == "" and len(data["inline"]) == 24


TOKEN = mint("a-listener").encode()  # the page token the Listen page hands its browser


def _post(app: Starlette, body: bytes) -> tuple[int, bytes]:
    """One POST to CROSS_PATH through the ASGI app, as the browser sends it."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": CROSS_PATH,
        "raw_path": CROSS_PATH.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"content-type", b"application/json"), (b"x-attention-token", TOKEN)],
        "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 1),
    }
    messages = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[dict] = []

    async def receive() -> dict:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    with ThreadPoolExecutor(1) as pool:  # a loop of its own: Playwright's may run on this thread
        pool.submit(asyncio.run, app(scope, receive, send)).result()
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


def test_the_apps_route_serves_a_mounted_head_and_says_when_a_clip_is_gone():
    from explorer.cross_store import CROSS
    from ui.routes import ROUTES

    app = Starlette(routes=ROUTES)
    pattern = _pattern(3, 50, seed=7)
    data = cross_data(pattern, list("abc"), 0, VIEW, "route-test")  # fills the process's store
    assert data["store"] in CROSS
    status, body = _post(app, json.dumps({"id": data["store"], "layer": 1, "head": 4}).encode())
    assert status == 200
    np.testing.assert_array_equal(np.frombuffer(body, "<f4").reshape(3, 50), pattern[1, 4])
    status, body = _post(app, b'{"id": "evicted-or-restarted", "layer": 0, "head": 0}')
    assert (status, json.loads(body)) == (404, {"error": GONE})
    assert _post(app, b'{"id": "x", "layer": "0", "head": 0}')[0] == 400
    assert _post(app, json.dumps({"id": data["store"], "layer": 4, "head": 0}).encode())[0] == 400
    assert _post(app, b"not json")[0] == 400


PAGE = """<!doctype html><html><body><div id="mount"></div><script type="module">
const url = URL.createObjectURL(new Blob([window.MODULE], { type: "text/javascript" }));
const { default: run } = await import(url);
run({ data: window.DATA, parentElement: document.getElementById("mount"),
      setStateValue: () => {}, setTriggerValue: () => {}, key: "cross" });
</script></body></html>"""


NO_CHROMIUM = pytest.mark.skipif(
    not Path(CHROMIUM).exists() and not os.environ.get("CI"),
    reason=f"{CHROMIUM} not installed (./test.sh installs it)",
)


def _view(page) -> dict:
    return json.loads(page.locator(".ax-cross").get_attribute("data-view") or "{}")


def _open(browser, data: dict, store: CrossStore):
    """The assembled module alone on a page, drawing ``data``; its route answered by
    ``server.cross_blocks.answer`` on ``store``. Returns the page, its errors and the requests
    the route answered."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    asked: list[dict] = []
    page.on("pageerror", lambda err: errors.append(str(err)))

    def serve(route):
        asked.append(json.loads(route.request.post_data_buffer or b"{}"))
        sent = answer(store, route.request.post_data_buffer or b"")
        route.fulfill(status=sent.status_code, body=bytes(sent.body))

    html = PAGE.replace("<body>", f"<head><style>{CSS.read_text()}</style></head><body>")
    page.route(ORIGIN, lambda route: route.fulfill(body=html, content_type="text/html"))
    page.route(ORIGIN + CROSS_PATH.lstrip("/"), serve)
    page.add_init_script(f"window.MODULE = {json.dumps(module('streamlit'))};")
    page.add_init_script(f"window.DATA = {json.dumps(data)};")
    page.goto(ORIGIN)
    page.locator(".ax-cross[data-drawn='1']").wait_for(timeout=30_000)
    return page, errors, asked


@pytest.mark.browser
@NO_CHROMIUM
def test_a_head_switch_at_40_tokens_by_1500_frames_fetches_and_redraws(browser):
    store, pattern = CrossStore(), _pattern(40, 1500)
    mel = np.random.default_rng(2).standard_normal((80, 1500)).astype(np.float32)
    data = cross_data(pattern, [f"t{i}" for i in range(40)], 0, VIEW, "c", mel_mf=mel, store=store)
    page, errors, asked = _open(browser, data, store)
    times = []
    ahead = '"layer":3,"head":2'  # once the visitor switched, the next head is asked ahead
    with page.expect_request(lambda r: ahead in (r.post_data or "").replace(" ", "")):
        page.keyboard.press("ArrowRight")
        page.locator(".ax-cross[data-drawn='2']").wait_for(timeout=30_000)
    assert (asked[0]["layer"], asked[0]["head"]) == (3, 1)  # nothing ahead of the first switch
    for head in range(1, 6):  # each head not sent with the view: fetched over the route
        if head > 1:
            page.keyboard.press("ArrowRight")
            page.locator(f".ax-cross[data-drawn='{head + 1}']").wait_for(timeout=30_000)
        times.append(float(page.locator(".ax-cross").get_attribute("data-draw-ms") or "nan"))
    assert _view(page) == {"layer": 3, "head": 5, "token": 2}
    box = page.locator(".ax-cross canvas.ax-map").bounding_box()
    x = box["x"] + 1 + 700.5 * (box["width"] - 2) / 1500
    page.mouse.click(x, box["y"] + 1 + 2.5 * (box["height"] - 2) / 40)
    cell = json.loads(page.locator(".ax-cross .ax-cell").get_attribute("data-cell") or "{}")
    assert (cell["layer"], cell["head"], cell["token"], cell["frame"]) == (3, 5, 2, 700)
    assert cell["value"] == pytest.approx(float(pattern[3, 5, 2, 700]), rel=1e-6)
    n_asked = len(asked)
    page.keyboard.press("ArrowLeft")  # head 4 has arrived already: drawn with no request
    page.locator(".ax-cross[data-drawn='8']").wait_for(timeout=30_000)
    assert len(asked) == n_asked and {a["id"] for a in asked} == {data["store"]}
    heads = [(a["layer"], a["head"]) for a in asked]
    assert len(heads) == len(set(heads))  # each head asked once
    assert {(3, h) for h in range(1, 6)} <= set(heads) and (3, 0) not in heads  # sent inline
    assert set(heads) <= {(layer, h) for layer in (2, 3) for h in range(6)}  # one step away
    assert errors == []
    with page.expect_download() as saved:  # the SVG: tokens and seconds as text
        page.locator(".ax-cross [data-export=svg]").click()
    svg = Path(saved.value.path()).read_text()
    assert svg.startswith("<svg") and ">t0</text>" in svg and ">0.00 s</text>" in svg
    print(f"\ncross-attention redraw at 40 × 1500: {', '.join(f'{t:.1f}' for t in times)} ms")
    page.close()


def _strip_frame(page, x: float, y: float) -> int:
    page.mouse.move(x, y)
    return int(page.locator(".ax-cross .ax-tip").get_attribute("data-frame") or "-1")


@pytest.mark.browser
@NO_CHROMIUM
def test_the_sounds_columns_sit_over_the_matrixs_columns(browser):
    store, n = CrossStore(), 997  # frames that are not a whole number of pixels each
    mel = np.random.default_rng(3).standard_normal((80, n)).astype(np.float32)
    data = cross_data(_pattern(12, n), list("abcdefghijkl"), 40, VIEW, "c", mel_mf=mel, store=store)
    page, errors, _ = _open(browser, data, store)
    strip = page.locator(".ax-cross canvas.ax-strip").bounding_box()
    matrix = page.locator(".ax-cross canvas.ax-map").bounding_box()
    assert (strip["x"], strip["width"]) == (matrix["x"], matrix["width"])
    assert strip["y"] + strip["height"] <= matrix["y"]  # above it
    inner = (matrix["width"] - 2) / n  # px a frame inside the 1 px border, the same in both
    row = matrix["y"] + 1 + 0.5 * (matrix["height"] - 2) / 12
    for f in (0, 1, 498, n - 1):  # the strip's frame and the matrix's column at the same x
        x = matrix["x"] + 1 + (f + 0.5) * inner
        frame = _strip_frame(page, x, strip["y"] + strip["height"] / 2)
        assert abs(frame - (40 + f)) <= 1  # the pointer's x is whole pixels: 1.2 px a frame
        page.mouse.click(x, row)
        cell = json.loads(page.locator(".ax-cross .ax-cell").get_attribute("data-cell") or "{}")
        assert cell["frame"] == frame  # the matrix's column under the strip's frame
        box = page.locator(".ax-cross .ax-box").bounding_box()
        mark = page.locator(".ax-cross .ax-strip-mark").bounding_box()
        assert (mark["x"], mark["width"]) == (box["x"], box["width"])  # its moment, outlined
    _strip_frame(page, matrix["x"] + matrix["width"] - 1.5, strip["y"] + 5)
    tip = page.locator(".ax-cross .ax-tip").text_content()
    last = 40 + n - 1
    assert (
        tip
        == f"The sound at {last * 0.02:.2f} s–{(last + 1) * 0.02:.2f} s (frame {last} of the clip)"
    )
    assert page.locator(".ax-cross .ax-strip-title").text_content() == (
        "The sound: pitch (low → high) over time"
    )
    assert errors == []
    page.close()


@pytest.mark.browser
@NO_CHROMIUM
def test_a_clip_the_server_no_longer_holds_is_said_in_the_view(browser):
    pattern = _pattern(5, 250)
    data = cross_data(pattern, list("abcde"), 0, VIEW, "c", store=CrossStore())
    serving = CrossStore()  # as after a restart: empty
    page, errors, asked = _open(browser, data, serving)
    page.keyboard.press("ArrowRight")
    page.locator(".ax-cross[data-waiting='error']").wait_for(timeout=30_000)
    assert page.locator(".ax-cross .ax-cell").text_content() == GONE
    assert page.locator(".ax-cross .ax-title").text_content() == "Layer 3, head 1"
    assert asked == [{"id": data["store"], "layer": 3, "head": 1}]  # nothing asked ahead
    page.keyboard.press("ArrowLeft")  # the head sent with the view still draws
    page.locator(".ax-cross[data-drawn='2']").wait_for(timeout=30_000)
    assert page.locator(".ax-cross").get_attribute("data-waiting") is None
    serving.put(data["store"], pattern)  # the page's next run mounted the clip again
    page.keyboard.press("ArrowRight")  # a new switch asks again, and the head comes
    page.locator(".ax-cross[data-drawn='3']").wait_for(timeout=30_000)
    assert [(a["layer"], a["head"]) for a in asked].count((3, 1)) == 2  # asked again
    assert _view(page) == {"layer": 3, "head": 1, "token": 2}
    readout = json.loads(page.locator(".ax-cross .ax-cell").get_attribute("data-cell") or "{}")
    assert readout["value"] == pytest.approx(float(pattern[3, 1, 2].max()), rel=1e-6)
    assert errors == []
    page.close()
