"""Cross-attention on the common path: the mount data (``explorer.streamlit_adapter.cross_data``)
is ``pack.cross_header``, where the blocks come from and the opening layer's block when small;
the sound pooled to
20 ms frames and sent exactly; a view or sound outside the clip refused; the app's block route
(``ui.routes.ROUTES``) serving a clip the page stored in the trace store by the name the page
gave it (``ui.listen.cache.clip_id``, ``held``), 404 once it is gone. And in Chromium, the
assembled module alone, its requests answered by the same block route (``server.api``): one
layer block holds every head (a head switch asks nothing, a layer switch asks its layer once), a
small clip's opening layer drawn from the page's data and its other layers fetched ahead, the
sound's columns over the matrix's, a clip the server no longer holds said in the view and asked
again on a switch once it is back."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from starlette.applications import Starlette

from attention_core import ModelConfig
from attention_core.methods.pack import cross_block, cross_header
from explorer import CSS, PATH
from explorer.bundle import module
from explorer.page_token import mint
from explorer.streamlit_adapter import cross_data, pool_mel
from scripts.live_app import CHROMIUM
from server import api

ORIGIN = "http://cross.test/"
VIEW = {"layer": 3, "head": 0, "token": 2}
N_PROMPT = 3
CONFIG = ModelConfig(  # Whisper tiny.en's decoder, as load_model("whisper").config says it
    *("whisper", 4, 6, 384, 64, 1536, 448, 51864, 1e-5),
    **{"key": "whisper", "family": "whisper", "n_kv_heads": 6, "causal": True, "audio": True},
)


@dataclass(frozen=True)
class Clip:
    """A transcribed clip as the block route reads it (``pack.HeardClip``), random weights."""

    tokens: tuple[str, ...]
    token_ids: tuple[int, ...]
    n_prompt: int
    cross_pattern_lhqk: np.ndarray = field(repr=False)


def _clip(t: int, frames: int, seed: int = 0) -> Clip:
    """A clip of ``t`` text tokens after a 3-token prompt over ``frames`` 20 ms frames."""
    rows = N_PROMPT + t  # the last row wrote the end of the text: no text token of its own
    raw = np.random.default_rng(seed).random((4, 6, rows, frames), dtype=np.float32)
    prompt = ("<|startoftranscript|>", "<|en|>", "<|notimestamps|>")
    tokens = (*prompt, *(f"t{i}" for i in range(t)))
    return Clip(tokens, tuple(range(rows)), N_PROMPT, raw / raw.sum(-1, keepdims=True))


def _written(clip: Clip, frames: tuple[int, int]) -> np.ndarray:
    """[layer, head, text token, frame]: what the view draws, the engine's rows that wrote the
    text over the span."""
    lo, hi = frames
    return clip.cross_pattern_lhqk[:, :, N_PROMPT - 1 : -1, lo:hi]


def test_the_mount_data_is_the_header_and_where_to_fetch_no_attention_inline():
    clip = _clip(5, 300)
    data = cross_data(clip, CONFIG, (40, 290), VIEW | {"extra": 1}, "id:40-290", [(3, 0)], "c")
    assert data["header"] == cross_header(clip, CONFIG, (40, 290))
    assert data["header"]["tokens"] == ["t0", "t1", "t2", "t3", "t4"]
    assert (data["header"]["n_frames"], data["header"]["first"]) == (250, 40)
    assert (data["mode"], data["model"], data["api"]) == ("cross", "whisper", PATH.lstrip("/"))
    assert (data["clip"], data["frames"], data["view"]) == ("id:40-290", [40, 290], VIEW)
    assert (data["named"], data["caption"]) == ([[3, 0]], "c")
    assert not {"inline", "mel", "store"} & set(data)  # no head alone, no store of its own
    opening = base64.b64decode(data["opening"])  # the view's layer, small: as the route sends it
    assert opening == cross_block(clip, 3, (40, 290)).data
    json.dumps(data)  # JSON-ready
    long = _clip(100, 1500)  # its layer is 3.6 MB: asked for over the route, as the others
    assert "opening" not in cross_data(long, CONFIG, (0, 1500), VIEW, "long:0-1500")


def test_the_sound_is_the_log_mel_pooled_to_20_ms_and_sent_exactly():
    mel = np.random.default_rng(1).standard_normal((80, 3000)).astype(np.float32)
    pooled = pool_mel(mel, 40, 290)
    want = np.array(
        [[(mel[m, 2 * f] + mel[m, 2 * f + 1]) / 2 for f in range(40, 290)] for m in range(80)]
    )
    np.testing.assert_allclose(pooled, want, rtol=1e-6, atol=1e-7)
    assert pooled.dtype == np.float32 and pooled.shape == (80, 250)
    data = cross_data(_clip(5, 300), CONFIG, (40, 290), VIEW, "c", mel_mf=pooled)
    sent = np.frombuffer(base64.b64decode(data["mel"]), "<f4").reshape(80, 250)
    np.testing.assert_array_equal(sent, pooled)
    assert data["n_bins"] == 80
    with pytest.raises(ValueError, match="mel shape"):
        cross_data(_clip(5, 300), CONFIG, (40, 290), VIEW, "c", mel_mf=pooled[:, 1:])
    with pytest.raises(ValueError, match="not inside"):
        pool_mel(mel, 1400, 1501)


@pytest.mark.parametrize(
    ("view", "frames", "said"),
    [
        ({"layer": 4}, (0, 10), "is not inside"),
        ({"head": 6}, (0, 10), "is not inside"),
        ({"token": 5}, (0, 10), "is not inside"),  # five text tokens: 0..4
        ({}, (10, 10), "frames"),
        ({}, (0, 301), "frames"),
    ],
)
def test_a_view_outside_the_clip_is_refused(view, frames, said):
    with pytest.raises(ValueError, match=said):
        cross_data(_clip(5, 300), CONFIG, frames, VIEW | view, "c")


TOKEN = mint("a-listener")  # the page token the Listen page hands its browser


def _post(app: Starlette, body: bytes) -> tuple[int, bytes]:
    """One POST to the block route through the ASGI app, as the browser sends it."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": PATH,
        "raw_path": PATH.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"content-type", b"application/json"), (b"x-attention-token", TOKEN.encode())],
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


def test_the_apps_route_serves_a_stored_clips_layers_and_says_when_it_is_gone():
    from ui.listen.cache import clip_id, held
    from ui.routes import ROUTES
    from ui.store import trace_store

    clip, span = _clip(3, 60, seed=7), (5, 55)
    stored = SimpleNamespace(key="ab" * 32, alignment=SimpleNamespace(span=span))
    name = clip_id(stored)  # type: ignore[arg-type]  # what the page gives the browser
    assert name == f"{'ab' * 32}:5-55" and held("whisper", name) is None
    trace_store().get(("whisper", "ab" * 32, span), lambda: clip)  # as ui.listen.cache.heard
    assert held("whisper", name) is clip
    assert held("whisper", "not-a-name") is None and held("minilm", name) is None
    app = Starlette(routes=ROUTES)
    body = {"model": "whisper", "clip": name, "layer": 1, "part": "cross", "frames": list(span)}
    status, sent = _post(app, json.dumps(body).encode())
    assert status == 200 and sent == cross_block(clip, 1, span).data
    np.testing.assert_array_equal(
        np.frombuffer(sent, "<f4").reshape(6, 3, 50), _written(clip, span)[1]
    )
    status, sent = _post(app, json.dumps(body | {"clip": "cd" * 32 + ":5-55"}).encode())
    assert (status, json.loads(sent)) == (404, {"error": api.GONE})
    assert _post(app, json.dumps(body | {"layer": 4}).encode())[0] == 400
    assert _post(app, json.dumps(body | {"frames": [5, 61]}).encode())[0] == 400
    assert _post(app, b"not json")[0] == 400


PAGE = """<!doctype html><html><body><div id="mount"></div><script type="module">
const url = URL.createObjectURL(new Blob([window.MODULE], { type: "text/javascript" }));
const { default: run } = await import(url);
window.mount = () => run({ data: window.DATA, parentElement: document.getElementById("mount"),
      setStateValue: () => {}, setTriggerValue: () => {}, key: "cross" });
window.mount();
</script></body></html>"""


NO_CHROMIUM = pytest.mark.skipif(
    not Path(CHROMIUM).exists() and not os.environ.get("CI"),
    reason=f"{CHROMIUM} not installed (./test.sh installs it)",
)


def _view(page) -> dict:
    return json.loads(page.locator(".ax-cross").get_attribute("data-view") or "{}")


def _drawn(page, count: int) -> None:
    page.locator(f".ax-cross[data-drawn='{count}']").wait_for(timeout=30_000)


def _serving(held: dict[str, Clip]) -> Starlette:
    """The block route (``server.api``) reading clips from ``held`` by name; no text model."""
    traces = api.Traces(
        models=(),
        model_error=lambda _: "no text model here",
        get_trace=lambda *_: pytest.fail("a clip's block computes no text pass"),
        get_clip=lambda _model, name: held.get(name),
        clip_models=("whisper",),
    )
    return Starlette(routes=api.routes(traces))


def _open(browser, data: dict, held: dict[str, Clip]):
    """The assembled module alone on a page, drawing ``data``; its requests answered by the
    block route on the clips ``held``. Returns the page, its errors and the bodies it sent."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    asked: list[dict] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    app = _serving(held)

    def serve(route):
        body = route.request.post_data_buffer or b""
        asked.append(json.loads(body or b"{}"))
        status, sent = _post(app, body)
        route.fulfill(status=status, body=sent)

    html = PAGE.replace("<body>", f"<head><style>{CSS.read_text()}</style></head><body>")
    page.route(ORIGIN, lambda route: route.fulfill(body=html, content_type="text/html"))
    page.route(ORIGIN + PATH.lstrip("/"), serve)
    page.add_init_script(f"window.MODULE = {json.dumps(module('streamlit'))};")
    page.add_init_script(f"window.DATA = {json.dumps(data | {'token': TOKEN})};")
    page.goto(ORIGIN)
    return page, errors, asked


def _cell(page) -> dict:
    return json.loads(page.locator(".ax-cross .ax-cell").get_attribute("data-cell") or "{}")


def _layers(asked: list[dict]) -> list[int]:
    return [a["layer"] for a in asked]


@pytest.mark.browser
@NO_CHROMIUM
def test_a_layer_holds_every_head_and_a_layer_switch_asks_for_its_layer_once(browser):
    clip, span = _clip(100, 1500), (0, 1500)  # 3.6 MB a layer: too big to fetch ahead
    mel = np.random.default_rng(2).standard_normal((80, 1500)).astype(np.float32)
    data = cross_data(clip, CONFIG, span, VIEW, "c:0-1500", mel_mf=mel)
    page, errors, asked = _open(browser, data, {"c:0-1500": clip})
    _drawn(page, 1)
    first = {"model": "whisper", "clip": "c:0-1500", "layer": 3, "part": "cross"}
    assert asked == [first | {"frames": [0, 1500]}]
    times = []
    for head in range(1, 6):  # every head of layer 3 came with it: drawn with no request
        page.keyboard.press("ArrowRight")
        _drawn(page, head + 1)
        times.append(float(page.locator(".ax-cross").get_attribute("data-draw-ms") or "nan"))
    assert _view(page) == {"layer": 3, "head": 5, "token": 2} and _layers(asked) == [3]
    page.locator(".ax-cross select[data-name=layer]").select_option("2")
    _drawn(page, 7)
    assert _layers(asked) == [3, 2] and _view(page) == {"layer": 2, "head": 5, "token": 2}
    box = page.locator(".ax-cross canvas.ax-map").bounding_box()
    x = box["x"] + 1 + 700.5 * (box["width"] - 2) / 1500
    page.mouse.click(x, box["y"] + 1 + 2.5 * (box["height"] - 2) / 100)
    _drawn(page, 8)
    cell = _cell(page)
    assert (cell["layer"], cell["head"], cell["token"], cell["frame"]) == (2, 5, 2, 700)
    assert cell["value"] == float(_written(clip, span)[2, 5, 2, 700])  # float32, exactly
    page.keyboard.press("ArrowUp")  # the view is focused: ↑ the layer
    _drawn(page, 9)
    page.keyboard.press("ArrowDown")  # layer 2 has arrived already: drawn with no request
    _drawn(page, 10)
    assert _layers(asked) == [3, 2, 1] and _cell(page)["frame"] == 700  # the pick stays
    assert errors == []
    with page.expect_download() as saved:  # the SVG: tokens and seconds as text
        page.locator(".ax-cross [data-export=svg]").click()
    svg = Path(saved.value.path()).read_text()
    assert svg.startswith("<svg") and ">t0</text>" in svg and ">0.00 s</text>" in svg
    print(f"\ncross-attention head switch at 100 × 1500: {', '.join(f'{t:.1f}' for t in times)} ms")
    page.close()


@pytest.mark.browser
@NO_CHROMIUM
def test_a_small_clips_opening_layer_comes_with_it_and_the_others_are_fetched_ahead(browser):
    clip = _clip(5, 250)
    data = cross_data(clip, CONFIG, (0, 250), VIEW, "small:0-250")
    page, errors, asked = _open(browser, data, {"small:0-250": clip})
    _drawn(page, 1)
    for _ in range(100):  # the other layers are asked for once the first is drawn
        if len(asked) >= 3:
            break
        page.wait_for_timeout(50)
    assert sorted(_layers(asked)) == [0, 1, 2]  # the opening layer came with the page
    for n, layer in enumerate(["0", "1", "2", "3"], start=2):
        page.locator(".ax-cross select[data-name=layer]").select_option(layer)
        _drawn(page, n)
    assert len(asked) == 3 and errors == []  # each other layer asked once
    readout = _cell(page)  # no frame picked: the token's own peak
    row = _written(clip, (0, 250))[3, 0, 2]
    assert readout["frame"] == int(np.argmax(row)) and readout["value"] == float(row.max())
    page.close()


def _strip_frame(page, x: float, y: float) -> int:
    page.mouse.move(x, y)
    return int(page.locator(".ax-cross .ax-tip").get_attribute("data-frame") or "-1")


@pytest.mark.browser
@NO_CHROMIUM
def test_the_sounds_columns_sit_over_the_matrixs_columns(browser):
    n = 997  # frames that are not a whole number of pixels each
    clip = _clip(12, n + 40, seed=3)
    mel = np.random.default_rng(3).standard_normal((80, n)).astype(np.float32)
    data = cross_data(clip, CONFIG, (40, 40 + n), VIEW, "s:40-1037", mel_mf=mel)
    page, errors, _ = _open(browser, data, {"s:40-1037": clip})
    _drawn(page, 1)
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
        assert _cell(page)["frame"] == frame  # the matrix's column under the strip's frame
        pick = page.locator(".ax-cross .ax-pick").bounding_box()
        mark = page.locator(".ax-cross .ax-strip-mark").bounding_box()
        assert (mark["x"], mark["width"]) == (pick["x"], pick["width"])  # its moment, outlined
    _strip_frame(page, matrix["x"] + matrix["width"] - 1.5, strip["y"] + 5)
    tip = page.locator(".ax-cross .ax-tip").text_content()
    last = 40 + n - 1
    assert tip == f"The sound at {last * 0.02:.2f} s–{(last + 1) * 0.02:.2f} s"
    assert page.locator(".ax-cross .ax-strip-title").text_content() == (
        "The sound: pitch (low → high) over time"
    )
    assert errors == []
    page.close()


@pytest.mark.browser
@NO_CHROMIUM
def test_a_clip_the_server_no_longer_holds_is_said_in_the_view(browser):
    clip = _clip(100, 1500)  # too big to fetch ahead: each layer asked as it is viewed
    data = cross_data(clip, CONFIG, (0, 1500), VIEW, "g:0-1500")
    held: dict[str, Clip] = {}  # as after a restart: empty
    page, errors, asked = _open(browser, data, held)
    page.locator(".ax-cross[data-waiting='error']").wait_for(timeout=30_000)
    status = page.locator(".ax-cross .ax-status").text_content()
    assert status == f"Could not load layer 3: {api.GONE}"
    assert page.locator(".ax-cross .ax-title").text_content() == "Layer 3, head 0"
    assert _layers(asked) == [3] and page.locator(".ax-cross").get_attribute("data-drawn") is None
    held["g:0-1500"] = clip  # the page's next run stored the clip again
    page.keyboard.press("ArrowRight")  # a switch asks again, and the layer comes
    _drawn(page, 1)
    assert _layers(asked) == [3, 3] and _view(page) == {"layer": 3, "head": 1, "token": 2}
    assert page.locator(".ax-cross").get_attribute("data-waiting") is None
    assert page.locator(".ax-cross .ax-status").text_content() == ""
    readout = _cell(page)
    assert readout["value"] == float(_written(clip, (0, 1500))[3, 1, 2].max())
    assert errors == []
    page.close()
