"""The attention explorer (explorer/) as a person uses it: Debian's Chromium against the live
`streamlit run app.py`, every number checked against the engine.

The explorer lives in a shadow root; Playwright's CSS selectors pierce it. The browser redraws
first and tells the server ~350 ms later (a rerun that re-runs the component with the new view),
so a test that changed the view waits for that round trip (``told``) before it measures pixels.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import parse_qs, quote_plus, urlparse

import numpy as np
import pytest
from PIL import Image
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from attention_core import attention_steps, cell_arithmetic, trace_sentence
from scripts.live_app import wait_idle

pytestmark = pytest.mark.browser

SENTENCE = "The river bank was muddy after the rain"  # 10 tokens with [CLS] and [SEP]
PAYLOAD = "<img src=x onerror=alert(1)> <b>bold</b>"
LONG = " ".join(["the river bank was muddy after the rain"] * 80)  # 642 tokens, cut to 512
STAGES = ("scores", "scaled", "masked", "pattern")
STAGE_TITLES = {
    "scores": "1 · scores",
    "scaled": "2 · scaled",
    "masked": "3 · masked",
    "pattern": "4 · softmax",
}
WAIT_MS = 30_000
HOST = '[data-testid="stBidiComponentIsolated"]'
# The view being drawn: the last .ax in the shadow root (there should be exactly one).
LIVE = f"""(() => {{
    const host = document.querySelector('{HOST}');
    const all = host?.shadowRoot ? host.shadowRoot.querySelectorAll('.ax') : [];
    return all.length ? all[all.length - 1] : null;
}})()"""
STATE = f"""() => {{
    const ax = {LIVE};
    if (!ax || !ax.dataset.view) return null;
    return {{drawn: Number(ax.dataset.drawn), view: JSON.parse(ax.dataset.view),
             title: ax.querySelector('.ax-title').textContent,
             roots: ax.getRootNode().querySelectorAll('.ax').length}};
}}"""


@pytest.fixture(scope="module")
def trace(model):
    return trace_sentence(model, SENTENCE)


class Wire:
    """The page's websocket: when it sent a frame, and when a script run finished (Streamlit's
    ForwardMsg ``script_finished``), as monotonic times seen here."""

    def __init__(self, page) -> None:
        self.sent: list[float] = []
        self.finished: list[float] = []
        page.on("websocket", self._socket)

    def _socket(self, ws) -> None:
        ws.on("framesent", lambda _: self.sent.append(time.monotonic()))
        ws.on("framereceived", self._received)

    def _received(self, payload) -> None:
        if isinstance(payload, bytes):
            msg = ForwardMsg.FromString(payload)
            if msg.WhichOneof("type") == "script_finished":
                self.finished.append(time.monotonic())


@pytest.fixture
def ax_page(page):
    page.wire = Wire(page)
    return page


def live(page):
    return page.locator(".ax").last


def state(page) -> dict:
    return page.evaluate(STATE)


def open_pattern(page, base: str, query: str) -> dict:
    """The pattern page for ``query`` (URL parameters), once the explorer has drawn. The tests'
    links name the layer and head (a link without them opens on the sentence's telling head)."""
    page.goto(f"{base}/pattern?{query}")
    page.wait_for_function(f"() => ({STATE})()?.drawn > 0", timeout=WAIT_MS)
    wait_idle(page, WAIT_MS)
    return state(page)


def wait_view(page, **fields) -> dict:
    """Wait (bounded) until the drawn view has these fields; returns the state."""
    page.wait_for_function(
        f"""(want) => {{
            const s = ({STATE})();
            return !!s && Object.entries(want).every(([k, v]) => s.view[k] === v);
        }}""",
        arg=fields,
        timeout=WAIT_MS,
    )
    return state(page)


def settle(page, sent_before: int, timeout_s: float = 30.0) -> None:
    """Wait for the debounced tell (a websocket frame ~350 ms after the redraw) and for the
    rerun it starts to finish, and give the component a moment to re-run with its result."""
    wire, deadline = page.wire, time.monotonic() + timeout_s
    while len(wire.sent) <= sent_before:
        assert time.monotonic() < deadline, "the new view was never sent to the server"
        page.wait_for_timeout(50)
    while True:
        while not (wire.finished and wire.finished[-1] > wire.sent[-1]):
            assert time.monotonic() < deadline, "the rerun after the tell did not finish"
            page.wait_for_timeout(50)
        page.wait_for_timeout(200)  # the last deltas are drawn, the component re-runs
        if wire.finished[-1] > wire.sent[-1]:  # and no later tell went out meanwhile
            break
    wait_idle(page, WAIT_MS)


@contextlib.contextmanager
def told(page):
    """Around a change of the view: afterwards the server has heard of it and rerun (nothing to
    wait for when the view did not change)."""
    sent, view = len(page.wire.sent), state(page)["view"]
    yield
    if state(page)["view"] != view:
        settle(page, sent)


def set_temperature(page, value: float) -> None:
    # A range input: set its value and fire `input`, as dragging the thumb does.
    live(page).locator("[data-name=temp]").evaluate(
        "(el, v) => { el.value = String(v);"
        " el.dispatchEvent(new Event('input', {bubbles: true})); }",
        value,
    )


def set_view(page, layer, head, scale, causal, temp) -> dict:
    """Move the explorer's own controls (selects, checkboxes, the temperature range)."""
    with told(page):
        root = live(page)
        root.locator("[data-name=layer]").select_option(str(layer))
        root.locator("[data-name=head]").select_option(str(head))
        root.locator("[data-name=scale]").set_checked(scale)
        root.locator("[data-name=causal]").set_checked(causal)
        set_temperature(page, temp)
        wait_view(page, layer=layer, head=head, scale=scale, causal=causal, temp=temp)
    return state(page)


def focus_view(page) -> None:
    """Click the view's heading: the view takes the focus (as a first click on it does)."""
    live(page).locator(".ax-title").click()
    assert page.evaluate(f"() => ({LIVE}).getRootNode().activeElement === ({LIVE})")


def canvas_geometry(page, stage: str) -> tuple[dict, int, int]:
    """A stage's heatmap on screen: its bounding box and its pixels (one per shown cell)."""
    canvas = live(page).locator(f"figure.ax-panel[data-stage={stage}] canvas.ax-map")
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    cols, rows = canvas.evaluate("(c) => [c.width, c.height]")
    return box, rows, cols


def cell_point(box: dict, rows: int, cols: int, r: int, c: int) -> tuple[float, float]:
    """The centre of the cell shown at row ``r``, column ``c``."""
    return box["x"] + (c + 0.5) * box["width"] / cols, box["y"] + (r + 0.5) * box["height"] / rows


TIP = re.compile(r"query “(.*)” \((\d+)\) → key “(.*)” \((\d+)\): (\S+)$")


def number(text: str) -> float:
    """A number as the explorer writes it (U+2212 minus, −∞)."""
    return float(text.replace("−", "-").replace("∞", "inf"))


def hover(page, stage: str, r: int, c: int, geometry=None) -> tuple[int, int, float, float]:
    """Hover the cell at shown row r, column c: (query, key, data-value, the visible number).
    The tooltip is written by the mousemove handler, which has run when mouse.move returns."""
    box, rows, cols = geometry or canvas_geometry(page, stage)
    page.mouse.move(*cell_point(box, rows, cols, r, c))
    read = f"() => {{ const t = ({LIVE}).querySelector('.ax-tip');"
    read += " return t.hidden ? null : [t.textContent, t.dataset.value]; }"
    tip = page.evaluate(read)
    if tip is None:  # not expected; allow a slow machine a moment
        tip = page.wait_for_function(read, timeout=5_000).json_value()
    text, value = tip
    found = TIP.search(text)
    assert found and text.startswith(STAGE_TITLES[stage]), text
    return int(found[2]), int(found[4]), float(value), number(found[5])


def close(got: float, want: float, tol: float = 1e-6) -> bool:
    if math.isinf(want) or math.isinf(got):
        return got == want
    return abs(got - want) <= tol


def close_shown(shown: float, want: float) -> bool:
    """A number as a learner reads it (three decimals) is the engine's, rounded."""
    if math.isinf(want) or math.isinf(shown):
        return shown == want
    return abs(shown - want) <= 5e-4 + 1e-9 * max(1.0, abs(want))


def close_rel(got: float, want: float) -> bool:
    # The engine's numbers are float32, which holds ~7 significant digits: a score of 30 is
    # only defined to ~2e-6 (one float32 step), a sum of exps computed in another order differs
    # in its 7th digit, so past magnitude 1 the 1e-6 is asked relative to the number.
    return abs(got - want) <= 1e-6 * max(1.0, abs(want))


def sidebar_slider(page, name: str) -> str:
    """The value a sidebar slider shows (an <input type=range>; also its thumb's label)."""
    slider = page.locator('[data-testid="stSidebar"]').get_by_role("slider", name=name)
    value = slider.input_value()
    assert slider.get_attribute("aria-valuetext") == value
    return value


def on_the_values_page(page) -> str:
    """Go to the Value updates page through the sidebar, as a person would, and return its title:
    the session's layer and head there are what the explorer told the server. (On the pattern
    page the explorer holds them, and the sidebar draws no sliders for them.)"""
    page.locator('[data-testid="stSidebarNav"] a', has_text="Value updates").click()
    title = page.locator("h1", has_text="Value updates ΔE")
    title.wait_for(timeout=WAIT_MS)
    return title.inner_text()


def query_of(page) -> dict:
    return {k: v[0] for k, v in parse_qs(urlparse(page.evaluate("location.href")).query).items()}


# ---------------------------------------------------------------------------------------------
# Exactness: the browser's numbers are the engine's.

COMBOS = [  # layer, head, scale, causal, temperature, the cell clicked for its arithmetic
    (2, 0, True, False, 1.0, (2, 1)),
    (0, 3, False, False, 0.35, (7, 3)),
    (5, 11, True, True, 2.5, (3, 8)),  # a masked cell
    (3, 7, False, True, 0.05, (9, 9)),
    (1, 5, True, False, 0.05, (0, 4)),
    (4, 9, True, True, 0.35, (6, 2)),
    (2, 6, False, False, 1.0, (4, 5)),  # nothing divides: "not divided", a what-if
]


def test_every_stage_and_the_cell_arithmetic_equal_the_engine(app_url, ax_page, trace):
    page, n = ax_page, trace.n_tokens
    open_pattern(page, app_url, f"s={quote_plus(SENTENCE)}&layer=2&head=0")
    for i, (layer, head, scale, causal, temp, (cq, ck)) in enumerate(COMBOS):
        got = set_view(page, layer, head, scale, causal, temp)
        assert got["title"] == f"layer {layer}, head {head}"
        steps = attention_steps(
            trace.scores_lhqk[layer, head],
            trace.config.d_head,
            scale=scale,
            temperature=got["view"]["temp"],
            causal=causal,
        )
        cells = [(1, 0), (3, 6), (n - 1, (3 * i) % n), (i % n, (i + 4) % n)]
        for stage in STAGES:
            want_stage, geometry = getattr(steps, stage), canvas_geometry(page, stage)
            for q, k in cells:
                hq, hk, value, shown = hover(page, stage, q, k, geometry)  # rows = queries
                assert (hq, hk) == (q, k)
                want = float(want_stage[q, k])
                if causal and k > q and stage == "masked":  # hidden: exactly −∞, then 0
                    assert want == value == shown == -math.inf
                if causal and k > q and stage == "pattern":
                    assert want == value == shown == 0.0
                assert close(value, want), (stage, layer, head, q, k, value, want)
                assert close_shown(shown, want), (stage, layer, head, q, k, shown, want)

        # Click a cell (press and release without moving): its arithmetic. The view is focused
        # first (a habit kept from before the view focused without scrolling).
        focus_view(page)
        with told(page):
            box, rows, cols = canvas_geometry(page, "pattern")
            page.mouse.click(*cell_point(box, rows, cols, cq, ck))
            wait_view(page, q=cq, k=ck)
        page.wait_for_function(
            f"""([q, k]) => {{
                const box = ({LIVE}).querySelector('.ax-cell');
                if (!box.querySelector('h4') || !box.dataset.cell) return false;
                const c = JSON.parse(box.dataset.cell);
                return c.query === q && c.key === k;
            }}""",
            arg=[cq, ck],
            timeout=WAIT_MS,
        )
        cell_box = live(page).locator(".ax-cell")
        cell = json.loads(cell_box.get_attribute("data-cell"))
        want = cell_arithmetic(trace.q_lhqe[layer, head], trace.k_lhke[layer, head], steps, cq, ck)
        assert cell["masked"] is want.masked is (causal and ck > cq)
        assert len(cell["products"]) == trace.config.d_head
        for got_p, want_p in zip(cell["products"], want.products_e, strict=True):
            assert close_rel(got_p, float(want_p))
        assert close_rel(cell["score"], want.score)
        assert close_rel(cell["row_exp_sum"], want.row_exp_sum)
        assert close_rel(cell["scaled"], want.scaled)  # up to ~660 at temperature 0.05
        assert close_rel(cell["row_max"], want.row_max)
        assert close(cell["share"], want.share)
        if want.masked:
            assert want.share == cell["share"] == 0.0
        # the same numbers as everyone reads them: three decimals, in plain words
        plain = [cell_box.locator(f".ax-n-plain-{i}").text_content() for i in range(3)]
        assert plain[0].endswith(
            f"the query's {trace.config.d_head} numbers times the key's, added up"
        )
        assert close_shown(number(re.match(r"= (\S+):", plain[0])[1]), want.score)
        assert close_shown(
            number(re.search(r"= ([^\s,]+)(?:, not divided)?(?: \(a what-if|$)", plain[1])[1]),
            want.scaled,
        )
        assert ("a what-if" in plain[1]) is (not scale or temp != 1)
        if want.masked:
            assert plain[2].startswith("= 0: ") and "the what-if mask hides" in plain[2]
        else:
            assert close_shown(number(re.match(r"= (\S+):", plain[2])[1]), want.share)
        for text in plain:
            assert not re.search(r"q_e|\d\.\d{4}", text), text
        # and as an engineer reads them (7 decimals), in the section that starts closed
        details = cell_box.locator("details.ax-eng")
        assert details.locator("summary").text_content() == "For engineers"
        assert not details.evaluate("(d) => d.open")
        assert not cell_box.locator(".ax-n-score").is_visible()
        assert close_rel(number(cell_box.locator(".ax-n-score").text_content()), want.score)
        scaled_text = cell_box.locator(".ax-n-scaled").text_content()
        assert close_rel(number(scaled_text.rsplit("= ", 1)[1]), want.scaled)
        if want.masked:
            assert cell_box.locator(".ax-n-masked").count() == 1
        else:
            share_text = cell_box.locator(".ax-n-share").text_content()
            assert close(number(share_text.rsplit("= ", 1)[1]), want.share)
    assert page.dialogs == []


# ---------------------------------------------------------------------------------------------
# Keys, the URL and the server following the browser.


def test_keys_step_head_and_layer_and_a_reload_reproduces_the_view(app_url, ax_page):
    page = ax_page
    first = open_pattern(page, app_url, f"s={quote_plus(SENTENCE)}&layer=2&head=0")
    assert first["title"] == "layer 2, head 0"
    assert page.evaluate("document.activeElement === document.body")
    with told(page):
        page.keyboard.press("ArrowRight")
        now = state(page)  # no wait: the redraw happens in the key handler
        assert now["title"] == "layer 2, head 1"
        assert now["drawn"] == first["drawn"] + 1
        assert query_of(page)["head"] == "1"

    # Typing in the sidebar's sentence box: the arrows move the caret, not the head.
    box = page.get_by_role("textbox", name="Your sentence")
    box.click()
    before = state(page)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    page.wait_for_timeout(100)
    assert state(page)["view"] == before["view"]
    assert state(page)["title"] == "layer 2, head 1"

    # The view's own switches, then ↓ with the view focused: next layer, and no scrolling.
    with told(page):
        live(page).locator("[data-name=causal]").check()
        live(page).locator("[data-name=scale]").uncheck()
        set_temperature(page, 0.35)
        wait_view(page, causal=True, scale=False, temp=0.35)
    focus_view(page)
    scroll = "() => [window.scrollY, document.querySelector('[data-testid=stMain]').scrollTop]"
    scrolled = page.evaluate(scroll)
    with told(page):
        page.keyboard.press("ArrowDown")
        assert state(page)["title"] == "layer 3, head 1"
        assert page.evaluate(scroll) == scrolled
    assert page.evaluate(scroll) == scrolled

    # The server was told (checked on another page below), and the URL carries the view.
    url = query_of(page)
    assert {k: url.get(k) for k in ("layer", "head", "causal", "scale", "temp")} == {
        "layer": "3",
        "head": "1",
        "causal": "1",
        "scale": "0",
        "temp": "0.35",
    }
    assert url["s"] == SENTENCE
    view = state(page)["view"]

    page.reload()
    page.wait_for_function(f"() => ({STATE})()?.drawn > 0", timeout=WAIT_MS)
    wait_idle(page, WAIT_MS)
    again = state(page)
    assert again["title"] == "layer 3, head 1"
    assert again["view"] == view
    root = live(page)
    assert root.locator("[data-name=causal]").is_checked()
    assert not root.locator("[data-name=scale]").is_checked()
    assert root.locator("[data-name=temp]").input_value() == "0.35"
    assert root.locator(".ax-temp").text_content() == "0.35"
    # The other pages follow the chosen head: the session heard of it.
    assert on_the_values_page(page).endswith("layer 3, head 1")
    assert sidebar_slider(page, "Layer") == "3" and sidebar_slider(page, "Head") == "1"


def test_no_websocket_frame_between_a_key_and_the_redraw(app_url, ax_page):
    page = ax_page
    open_pattern(page, app_url, f"s={quote_plus(SENTENCE)}&layer=4&head=6")
    page.wait_for_timeout(500)
    wire, drawn = page.wire, state(page)["drawn"]
    sent_before = len(wire.sent)
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"(d) => Number(({LIVE}).dataset.drawn) > d", arg=drawn, timeout=WAIT_MS)
    redrawn = time.monotonic()
    assert len(wire.sent) == sent_before, "a frame went to the server before the redraw"
    assert state(page)["title"] == "layer 4, head 7"
    # The debounced tell does come, ~350 ms after the redraw.
    while len(wire.sent) == sent_before and time.monotonic() - redrawn < 3:
        page.wait_for_timeout(20)
    assert len(wire.sent) > sent_before, "the server was never told"
    assert wire.sent[sent_before] >= redrawn  # told after the redraw, never before it
    settle(page, sent_before)


# ---------------------------------------------------------------------------------------------
# Layout switches.


def test_columns_are_queries_when_transposed(app_url, ax_page, trace):
    page, n = ax_page, trace.n_tokens
    open_pattern(page, app_url, f"s={quote_plus(SENTENCE)}&layer=1&head=2")
    caption = live(page).locator("figure.ax-panel[data-stage=pattern] .ax-caption")
    assert "across each row" in caption.text_content()
    with told(page):
        live(page).locator("[data-name=transpose]").check()
        wait_view(page, transpose=True)
    caption = live(page).locator("figure.ax-panel[data-stage=pattern] .ax-caption")
    assert "down each column" in caption.text_content()
    assert "columns are queries, rows are keys" in live(page).locator(".ax-hint").text_content()
    assert query_of(page)["transpose"] == "1"
    steps = trace.steps(1, 2)
    for r, c in [(0, 5), (6, 2), (n - 1, 1)]:
        q, k, value, shown = hover(page, "pattern", r, c)
        assert (q, k) == (c, r)  # shown row = key, shown column = query
        assert close(value, float(steps.pattern[c, r]))
        assert close_shown(shown, float(steps.pattern[c, r]))
    # Each column (one query) sums to 1: read a whole column through the tooltip.
    geometry = canvas_geometry(page, "pattern")
    column = [hover(page, "pattern", r, 3, geometry)[2] for r in range(n)]
    assert sum(column) == pytest.approx(1.0, abs=1e-6)


def test_hide_cls_and_sep(app_url, ax_page, trace):
    page, n = ax_page, trace.n_tokens
    open_pattern(page, app_url, f"s={quote_plus(SENTENCE)}&layer=0&head=1")
    labels = live(page).locator("figure.ax-panel[data-stage=pattern] .ax-rows span")
    assert labels.all_text_contents() == list(trace.tokens.tokens)
    with told(page):
        live(page).locator("[data-name=hide_special]").check()
        wait_view(page, hide_special=True)
    root = live(page)
    for stage in STAGES:
        fig = root.locator(f"figure.ax-panel[data-stage={stage}]")
        for axis in (".ax-rows span", ".ax-cols span"):
            texts = fig.locator(axis).all_text_contents()
            assert texts == list(trace.tokens.tokens[1:-1])
            assert "[CLS]" not in texts and "[SEP]" not in texts
        size = fig.locator("canvas.ax-map").evaluate("(c) => [c.width, c.height]")
        assert size == [n - 2, n - 2]
    # The first shown cell is now token 1 → token 1, with the engine's weight.
    q, k, value, _ = hover(page, "pattern", 0, 0)
    assert (q, k) == (1, 1)
    assert close(value, float(trace.steps(0, 1).pattern[1, 1]))
    assert query_of(page)["hide_special"] == "1"
    on_the_values_page(page)  # the session heard of it: the sidebar there shows it on
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert sidebar.get_by_role("switch", name="Hide [CLS] / [SEP]").is_checked()


# ---------------------------------------------------------------------------------------------
# 512 tokens: drawn in time, labels thinned, drag / wheel / double-click zoom.


def test_zoom_at_512_tokens(app_url, ax_page):
    page = ax_page
    started = time.monotonic()
    open_pattern(page, app_url, f"s={quote_plus(LONG)}&layer=2&head=0")
    assert time.monotonic() - started < 30
    box, rows, cols = canvas_geometry(page, "pattern")
    assert (rows, cols) == (512, 512)
    spans = live(page).locator("figure.ax-panel[data-stage=pattern] .ax-cols span")
    count = spans.count()
    assert 5 <= count <= 40
    note = live(page).locator(".ax-labels")  # how many labels did not fit, said
    assert note.text_content() == (
        f"{512 - count} of 512 labels hidden on the rows and on the columns; "
        "hover a cell for its tokens."
    )
    assert spans.evaluate_all("(s) => s.every((e) => e.tagName === 'SPAN' && e.textContent)")
    assert spans.first.text_content() == "[CLS]"

    # Drag a rectangle: the window it covers.
    focus_view(page)
    box, rows, cols = canvas_geometry(page, "pattern")
    start, end = cell_point(box, rows, cols, 100, 100), cell_point(box, rows, cols, 220, 200)
    with told(page):  # (a drag tells the server nothing; the click after it does)
        page.mouse.move(*start)
        page.mouse.down()
        page.mouse.move(*end, steps=8)
        page.mouse.up()
        page.wait_for_function(
            f"() => ({LIVE}).querySelector('[data-stage=pattern] canvas.ax-map').width < 512",
            timeout=WAIT_MS,
        )
        # the window survives the server hearing of something: pick a cell in it
        box, rows, cols = canvas_geometry(page, "pattern")
        page.mouse.click(*cell_point(box, rows, cols, 3, 4))
    box, rows, cols = canvas_geometry(page, "pattern")
    assert abs(rows - 121) <= 2 and abs(cols - 101) <= 2, (rows, cols)
    shown = re.search(
        r"Showing tokens (\d+)–(\d+) × (\d+)–(\d+)", live(page).locator(".ax-hint").text_content()
    )
    assert shown, live(page).locator(".ax-hint").text_content()
    for got, want in zip(map(int, shown.groups()), (100, 220, 100, 200), strict=True):
        assert abs(got - want) <= 2, shown.groups()
    assert live(page).locator("figure.ax-panel[data-stage=scores] canvas.ax-map").evaluate(
        "(c) => [c.width, c.height]"
    ) == [cols, rows]

    # Double-click: everything again.
    focus_view(page)
    box, rows, cols = canvas_geometry(page, "pattern")
    with told(page):
        page.mouse.dblclick(*cell_point(box, rows, cols, 5, 5))
        page.wait_for_function(
            f"() => ({LIVE}).querySelector('[data-stage=pattern] canvas.ax-map').width === 512",
            timeout=WAIT_MS,
        )
    assert canvas_geometry(page, "pattern")[1:] == (512, 512)
    assert "Showing tokens" not in live(page).locator(".ax-hint").text_content()

    # The wheel zooms around the pointer.
    box, rows, cols = canvas_geometry(page, "pattern")
    page.mouse.move(*cell_point(box, rows, cols, 256, 256))
    page.mouse.wheel(0, -120)
    page.wait_for_function(
        f"() => ({LIVE}).querySelector('[data-stage=pattern] canvas.ax-map').width < 512",
        timeout=WAIT_MS,
    )
    _, rows, cols = canvas_geometry(page, "pattern")
    assert abs(cols - round(512 * 0.7)) <= 1 and abs(rows - round(512 * 0.7)) <= 1


# ---------------------------------------------------------------------------------------------
# Markup in the sentence stays text.


def test_html_payload_tokens_stay_text(app_url, ax_page, model):
    page = ax_page
    open_pattern(page, app_url, f"s={quote_plus(SENTENCE)}&layer=2&head=0")
    box = page.get_by_role("textbox", name="Your sentence")
    box.fill(PAYLOAD)
    box.press("Enter")
    tokens = list(trace_sentence(model, PAYLOAD).tokens.tokens)
    page.wait_for_function(
        f"(n) => ({LIVE})?.querySelectorAll('[data-stage=scores] canvas.ax-map')[0]?.width === n",
        arg=len(tokens),
        timeout=WAIT_MS,
    )
    wait_idle(page, WAIT_MS)
    page.wait_for_timeout(300)
    assert state(page)["roots"] == 1  # the new sentence's view replaced the old one
    root = live(page)
    fig = root.locator("figure.ax-panel[data-stage=pattern]")
    for axis in (".ax-rows span", ".ax-cols span"):
        labels = fig.locator(axis).all_text_contents()  # every token, or every step-th
        assert any(labels == tokens[::step] for step in range(1, 4)), labels
    assert page.dialogs == []
    assert (
        page.evaluate(
            f"() => document.querySelector('{HOST}').shadowRoot.querySelectorAll('img, b').length"
        )
        == 0
    )
    assert page.locator("img[src=x]").count() == 0
    # and the tooltip and the arithmetic quote them as text as well
    assert hover(page, "pattern", 1, 2)[:2] == (1, 2)
    assert "“<” (1) → key “im” (2)" in root.locator(".ax-tip").text_content()
    focus_view(page)
    with told(page):
        box, rows, cols = canvas_geometry(page, "pattern")
        page.mouse.click(*cell_point(box, rows, cols, 1, 2))
        wait_view(page, q=1, k=2)
    title = live(page).locator(".ax-cell h4")
    title.wait_for(timeout=WAIT_MS)
    assert "query “<” (1) → key “im” (2)" in title.text_content()
    assert title.evaluate("(h) => h.children.length") == 0  # text only, no markup
    assert page.dialogs == []


# ---------------------------------------------------------------------------------------------
# Dark theme.


def luminance(css_colour: str) -> float:
    """WCAG relative luminance of an rgb()/rgba() colour."""
    r, g, b = (int(x) / 255 for x in re.findall(r"[\d.]+", css_colour)[:3])
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


SHOT = Path("/tmp/explorer_dark.png")  # looked at by eye when the test was written; not kept


def test_dark_theme_is_legible(app_url, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, color_scheme="dark")
    try:
        page = context.new_page()
        open_pattern(page, app_url, f"s={quote_plus(SENTENCE)}&layer=2&head=0&q=3&k=2")
        page.wait_for_function(f"() => !!({LIVE}).querySelector('.ax-cell h4')", timeout=WAIT_MS)
        background = page.evaluate(
            "() => getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor"
        )
        assert luminance(background) < 0.1  # the app really is dark
        live(page).locator(".ax-title").scroll_into_view_if_needed()
        page.screenshot(path=str(SHOT))
        colours = live(page).evaluate(
            """(ax) => {
                const c = (sel) => getComputedStyle(ax.querySelector(sel)).color;
                return [c('.ax-title'), c('.ax-rows span'), c('.ax-caption'),
                        c('[data-name=layer]'), c('.ax-stage'), c('.ax-cell h4')];
            }"""
        )
        for colour in colours:
            assert luminance(colour) > 0.6, colours
        # the tooltip and the cell arithmetic below the panels
        hover(page, "pattern", 3, 2)
        live(page).locator(".ax-cell").scroll_into_view_if_needed()
        hover(page, "pattern", 8, 2)
        page.screenshot(path=str(SHOT).replace(".png", "_cell.png"))
        tip = live(page).locator(".ax-tip").evaluate("(t) => getComputedStyle(t).color")
        assert luminance(tip) > 0.6
    finally:
        context.close()


# ---------------------------------------------------------------------------------------------
# Re-runs: the server hearing of a change re-runs the component with the new view.


def test_one_explorer_after_the_server_hears_of_a_change(app_url, ax_page):
    page = ax_page
    open_pattern(page, app_url, f"s={quote_plus(SENTENCE)}&layer=2&head=0")
    with told(page):
        page.keyboard.press("ArrowRight")
    holders = f"() => document.querySelector('{HOST}').shadowRoot.querySelectorAll('.ax-holder')"
    assert state(page)["roots"] == 1
    assert page.evaluate(f"() => ({holders})().length") == 1
    assert state(page)["title"] == "layer 2, head 1"


def test_one_key_press_steps_one_head_after_a_rerun(app_url, ax_page):
    page = ax_page
    open_pattern(page, app_url, f"s={quote_plus(SENTENCE)}&layer=2&head=0")
    with told(page):
        page.keyboard.press("ArrowRight")
    with told(page):
        page.keyboard.press("ArrowRight")
        assert state(page)["view"]["head"] == 2
    assert query_of(page)["head"] == "2"
    assert on_the_values_page(page).endswith("layer 2, head 2")


def test_a_first_click_picks_the_cell_under_the_pointer_without_scrolling(app_url, ax_page):
    page = ax_page
    open_pattern(page, app_url, f"s={quote_plus(SENTENCE)}&layer=2&head=0")
    scroll = "() => document.querySelector('[data-testid=stMain]').scrollTop"
    canvas = live(page).locator("figure.ax-panel[data-stage=scores] canvas.ax-map")
    box = canvas.bounding_box()  # in view at the top of the page: no scrolling needed
    x, y = cell_point(box, 10, 10, 7, 3)
    assert 0 < y < 1000 and page.evaluate(scroll) == 0
    page.mouse.click(x, y)  # the click is handled at once (mouseup redraws)
    assert page.evaluate(scroll) == 0
    assert (state(page)["view"]["q"], state(page)["view"]["k"]) == (7, 3)


# ---------------------------------------------------------------------------------------------
# One module instance: the view's state and the fetched blocks live in the bundle's modules (no
# globals). Streamlit imports the script once per page (a blob URL cached by the script's hash),
# so they outlive every run of the component; the state is kept per mount (Streamlit's `key`
# is a new id for each mount).


def test_a_rerun_keeps_the_module_the_state_and_the_blocks(app_url, ax_page):
    page = ax_page
    page.goto(f"{app_url}/learn?s={quote_plus(SENTENCE)}&step=5&layer=2&head=0")
    view = page.locator(".ax[data-drawn]").last
    view.wait_for(timeout=WAIT_MS)
    wait_idle(page, WAIT_MS)
    page.wait_for_load_state("networkidle")  # every layer's scores prefetched (small sentence)
    canvas = view.locator("canvas.ax-map")
    canvas.hover()
    page.mouse.wheel(0, -120)  # zoom in: a state of the view that the server never hears of
    page.wait_for_function("(c) => c.width < 10", arg=canvas.element_handle(), timeout=WAIT_MS)
    zoomed, drawn = canvas.evaluate("(c) => c.width"), int(view.get_attribute("data-drawn"))
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "api/attention/block" in r.url else None)
    head = page.locator('[data-testid="stSidebar"]').get_by_role("slider", name="Head")
    head.focus()
    head.press("ArrowRight")  # the server moves the view: the component runs again
    view.locator(".ax-title", has_text="layer 2, head 1").wait_for(timeout=WAIT_MS)
    wait_idle(page, WAIT_MS)
    assert int(view.get_attribute("data-drawn")) == drawn + 1  # the same state counts on
    assert canvas.evaluate("(c) => c.width") == zoomed  # and keeps its zoom
    assert asked == []  # the block cache is the same one


# ---------------------------------------------------------------------------------------------
# Export: the current view as PNG and SVG.

SVG = "{http://www.w3.org/2000/svg}"


def save(page, kind: str, folder: Path) -> Path:
    with page.expect_download(timeout=WAIT_MS) as info:
        live(page).locator(f"[data-export={kind}]").click()
    download = info.value
    path = folder / download.suggested_filename
    download.save_as(path)
    return path


def test_save_the_view_as_png_and_svg(app_url, ax_page, trace, tmp_path):
    page = ax_page
    open_pattern(page, app_url, f"s={quote_plus(SENTENCE)}&layer=2&head=5")
    png, svg = save(page, "png", tmp_path), save(page, "svg", tmp_path)
    assert png.name == "attention-minilm-L2-H5.png"
    assert svg.name == "attention-minilm-L2-H5.svg"

    with Image.open(png) as image:
        assert image.format == "PNG" and image.width > 800 and image.height > 800
        pixels = np.asarray(image.convert("RGB"))
    colours = np.unique(pixels.reshape(-1, 3), axis=0)
    assert len(colours) > 50  # heatmaps, not a blank page
    assert (pixels < 100).all(axis=2).any()  # dark text on the white ground

    root = ET.parse(svg).getroot()
    texts = [t.text for t in root.iter(f"{SVG}text")]
    for token in trace.tokens.tokens:
        assert texts.count(token) >= 2 * 4  # rows and columns of all four panels
    assert "layer 2, head 5" in texts
    for title in ("1 · scores Q·Kᵀ", "2 · scaled", "3 · masked", "4 · softmax"):
        assert title in texts
    n = trace.n_tokens
    cells = [r for r in root.iter(f"{SVG}rect") if r.get("fill", "").startswith("rgb(")]
    assert len(cells) == 4 * n * n
    # The colour-bar ends of the scores panel: ±max |score| of the head, as the engine has it.
    big = float(np.abs(trace.scores_lhqk[2, 5]).max())
    assert f"{big:.2f}" in texts and f"−{big:.2f}" in texts
    assert texts.count("1.00") >= 1 and texts.count("0.00") >= 1  # the softmax panel's ends
