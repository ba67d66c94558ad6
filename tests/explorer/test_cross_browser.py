"""Cross-attention, tokens × time, on the Listen page in Debian's Chromium against `streamlit run
app.py`: the explorer opens on the page's head, its layer sent with the page and the others
fetched over the text models' block route (part "cross", every head of a layer in one block,
each layer asked once), switches head with the keyboard and layer with its select (redrawn in
the browser, the time printed), the sound strip lies over the matrix's exact x range, and a
clicked cell's readout and hovered tooltip are the engine's ``cross_pattern_lhqk`` (1e-6
relative); the page hears the click: its token picker and the app's shared layer and head (in
the URL) follow."""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from attention_core import load_whisper, log_mel, transcribe
from attention_core.core.pieces import show_piece
from attention_core.models.whisper.audio import load_audio, speech_frames
from explorer import PATH
from scripts.live_app import CHROMIUM, streamlit_server, wait_idle
from ui.params import PARAMS
from ui.presets import CLIPS, clip_names

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists() and not os.environ.get("CI"),
        reason=f"{CHROMIUM} not installed (./test.sh installs it)",
    ),
]
WAIT_MS = 60_000


@pytest.fixture(scope="module")
def app_url():
    with streamlit_server() as url:
        yield url


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    yield context.new_page()
    context.close()


def _view(page) -> dict:
    return json.loads(page.locator(".ax-cross").get_attribute("data-view") or "{}")


def _wait_view(page, layer: int, head: int) -> None:
    """Wait until the explorer has drawn layer, head (it lives in the component's shadow root,
    which Playwright's locators pierce)."""
    want = json.dumps({"layer": layer, "head": head}, separators=(",", ":"))
    page.locator(f".ax-cross[data-view^='{want[:-1]}']").wait_for(timeout=WAIT_MS)


def _picker(page, label: str):
    """A Streamlit selectbox's input (its value is the option shown)."""
    return page.locator("[data-testid=stSelectbox]", has_text=label).locator("input")


def _click(page, token: int, frame: int, n_tokens: int, n_frames: int) -> dict:
    """Click the cell (token, frame of the span) and read its readout."""
    box = page.locator(".ax-cross canvas.ax-map").bounding_box()
    x = box["x"] + 1 + (frame + 0.5) * (box["width"] - 2) / n_frames
    y = box["y"] + 1 + (token + 0.5) * (box["height"] - 2) / n_tokens
    page.mouse.move(x, y)
    tip = float(page.locator(".ax-cross .ax-tip").get_attribute("data-value") or "nan")
    page.mouse.click(x, y)
    cell = json.loads(page.locator(".ax-cross .ax-cell").get_attribute("data-cell") or "{}")
    return cell | {"tip": tip}


def _strip_lines_up(page, frame: int, n_frames: int, lo: int) -> None:
    """The sound strip is drawn over the matrix's exact x range, and hovering frame ``frame``'s
    column in it tells that frame's moment."""
    strip = page.locator(".ax-cross canvas.ax-strip").bounding_box()
    matrix = page.locator(".ax-cross canvas.ax-map").bounding_box()
    assert (strip["x"], strip["width"]) == (matrix["x"], matrix["width"])
    assert strip["y"] + strip["height"] <= matrix["y"]
    page.mouse.move(
        strip["x"] + 1 + (frame + 0.5) * (strip["width"] - 2) / n_frames,
        strip["y"] + strip["height"] / 2,
    )
    tip = page.locator(".ax-cross .ax-tip")
    assert int(tip.get_attribute("data-frame") or "-1") == lo + frame
    assert (tip.text_content() or "").startswith(f"The sound at {(lo + frame) * 0.02:.2f} s")


def test_cross_attention_switches_in_the_browser_and_reads_the_engines_cells(app_url, page):
    name = clip_names()[0]  # the page opens on the first example clip
    audio = load_audio(CLIPS / f"{name}.wav")
    with threadpool_limits(limits=1, user_api="blas"):  # as the app runs it (live_app's env):
        trace = transcribe(load_whisper(), log_mel(audio.samples_n))  # the same sums' order
    lo, hi = speech_frames(audio.samples_n)
    n = len(trace.prompt_ids)
    words = [show_piece(t) for t in trace.tokens][n:]
    asked: list[str] = []  # the layers fetched over the block route (nothing goes inline)
    page.on("request", lambda r: r.url.endswith(PATH) and asked.append(r.post_data or ""))
    page.goto(f"{app_url}/listen")
    page.locator(".ax-cross[data-drawn]").wait_for(timeout=WAIT_MS)
    wait_idle(page, WAIT_MS)
    assert _view(page) == {"layer": 3, "head": 0, "token": 0}
    rows = page.locator(".ax-cross .ax-rows span").all_text_contents()
    assert rows == words[: len(rows)] and rows[0] == words[0]  # text, thinned when many

    page.locator(".ax-cross").focus()
    page.keyboard.press("ArrowRight")  # ← → the head, as in the explorer
    _wait_view(page, 3, 1)
    page.locator(".ax-cross select[data-name=layer]").select_option("2")
    _wait_view(page, 2, 1)
    ms = float(page.locator(".ax-cross").get_attribute("data-draw-ms") or "nan")
    print(f"\ncross-attention redraw: {ms:.1f} ms ({len(words)} tokens × {hi - lo} frames)")

    fetched = [json.loads(body) for body in asked]
    assert {(a["model"], a["part"], tuple(a["frames"])) for a in fetched} == {
        ("whisper", "cross", (lo, hi))
    }
    layers = [a["layer"] for a in fetched]  # a short clip's: the others ahead, each once
    assert 3 not in layers and 2 in layers and len(layers) == len(set(layers))  # 3: with the page

    token, frame = len(words) // 2, (hi - lo) // 2
    _strip_lines_up(page, frame, hi - lo, lo)
    cell = _click(page, token, frame, len(words), hi - lo)
    want = float(trace.cross_pattern_lhqk[2, 1, n - 1 + token, lo + frame])  # the row that wrote it
    assert (cell["layer"], cell["head"], cell["token"], cell["frame"]) == (2, 1, token, lo + frame)
    np.testing.assert_allclose([cell["value"], cell["tip"]], want, rtol=1e-6)
    assert cell["seconds"] == pytest.approx((lo + frame) * 0.02)

    # the page hears {layer, head, token}: its token picker and the shared layer and head follow,
    # the explorer keeps its view
    token_picker = _picker(page, "A token")
    page.wait_for_function(
        "([el, want]) => el.value === want",
        arg=[token_picker.element_handle(), f"{token}: {words[token]}"],
        timeout=WAIT_MS,
    )
    wait_idle(page, WAIT_MS)
    shared = parse_qs(urlsplit(page.url).query)  # the app's shared layer and head, in its URL
    layer_in_url = shared.get("layer", [str(PARAMS["layer"].default)])  # left out at its default
    assert (layer_in_url, shared.get("head")) == (["2"], ["1"])
    assert _view(page) == {"layer": 2, "head": 1, "token": token}
    page.screenshot(path="/tmp/cross_in_browser.png", full_page=True)
