"""The stages beyond the pattern and the grid's pinned token, in Debian's Chromium, with every
number from the engine. The notebook widget's module (tests/explorer/widget_page.py) shows the
norm-weighted and rollout stages: a picked cell's readout and a hovered cell's value equal
``norm_weighted_lhqk`` and ``rollout_lqk`` to 1e-6 relative. The Streamlit adapter's module in
grid mode, its layer blocks answered by ``attention_core.methods.pack.layer_block`` (page.route, no
server), pins a token from the keyboard: every tile then shows that token's row (or column),
its brightest pixel and its tooltip's number the engine's largest weight in it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from attention_core import trace_sentence
from attention_core.methods.norm_weighted import norm_weighted_lhqk
from attention_core.methods.pack import MAX_TILE, header, layer_block, visible_tokens
from attention_core.methods.rollout import rollout_lqk
from explorer import CSS, Explorer
from explorer.bundle import module
from explorer.streamlit_adapter import grid_data
from scripts.live_app import CHROMIUM
from tests.explorer.widget_page import ORIGIN, WAIT_MS, asked, widget_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists() and not os.environ.get("CI"),
        reason=f"{CHROMIUM} not installed (./test.sh installs it)",
    ),
]

TEXT = "the animal did not cross the street because it was too tired"
DRAWN = "() => Number(document.querySelector('.ax')?.dataset.drawn) > 0"


def _pick(page, layer: int, head: int, q: int, k: int) -> dict:
    """Set the view from the kernel side and read the picked cell's numbers once drawn."""
    page.evaluate(f"window.pyChange({{layer: {layer}, head: {head}, q: {q}, k: {k}}})")
    page.wait_for_function(
        f"""() => {{
            const box = document.querySelector('.ax-cell');
            const view = JSON.parse(document.querySelector('.ax').dataset.view || '{{}}');
            if (!box || !box.dataset.cell || view.layer !== {layer} || view.head !== {head})
                return false;
            const c = JSON.parse(box.dataset.cell);
            return c.query === {q} && c.key === {k};
        }}""",
        timeout=WAIT_MS,
    )
    return json.loads(page.locator(".ax-cell").get_attribute("data-cell"))


def _hover(page, stage: str, q: int, k: int) -> float:
    """The value the tooltip gives for query q, key k of a stage's panel (rows are queries)."""
    canvas = page.locator(f"figure.ax-panel[data-stage={stage}] canvas.ax-map")
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    cols, rows = canvas.evaluate("(c) => [c.width, c.height]")
    page.mouse.move(
        box["x"] + (k + 0.5) * box["width"] / cols, box["y"] + (q + 0.5) * box["height"] / rows
    )
    tip = page.locator(".ax-tip")
    tip.wait_for(state="visible", timeout=WAIT_MS)
    return float(tip.get_attribute("data-value"))


@pytest.mark.parametrize("name", ["minilm", "smollm2"])
def test_weighted_and_rollout_cells_are_the_engines(browser, name):
    widget = Explorer(TEXT, model=name, stages=("pattern", "weighted", "rollout"))
    trace = widget.trace
    weighted = norm_weighted_lhqk(trace)
    rollout = rollout_lqk(trace.pattern_lhqk)
    n = trace.n_tokens
    with widget_page(browser, widget, DRAWN) as page:
        for layer, head, q, k in [(1, 2, n - 1, 0), (3, 5, n - 2, 4)]:
            cell = _pick(page, layer, head, q, k)
            want = float(weighted[layer, head, q, k])
            assert cell["weighted"]["weighted"] == pytest.approx(want, rel=1e-6)
            assert cell["weighted"]["norm"] == float(trace.value_norm_lhk[layer, head, k])
            assert cell["rollout"] == pytest.approx(float(rollout[layer, q, k]), rel=1e-6)
            text = page.locator(".ax-cell .ax-n-weighted").text_content() or ""
            w, norm = cell["weighted"]["weight"], cell["weighted"]["norm"]
            assert text == f"weight {w:.3f} × value length {norm:.3f} = {want:.3f}"
            words = page.locator(".ax-cell .ax-n-rollout").text_content() or ""
            tokens = widget.header["tokens"]
            share = f"{rollout[layer, q, k]:.3f}"
            assert (
                words == f"after layer {layer}, “{tokens[q]}” draws {share} on input “{tokens[k]}”"
            )
            assert _hover(page, "weighted", q, k) == pytest.approx(want, rel=1e-6)
            assert _hover(page, "rollout", k, q) == pytest.approx(
                float(rollout[layer, k, q]), rel=1e-6
            )
        # Colours run 0..the largest value shown (not 0..1): the bar's top end says it.
        top = page.locator("figure.ax-panel[data-stage=weighted] .ax-hi").text_content()
        assert float(top) == pytest.approx(float(weighted[3, 5].max()), abs=0.005)


def test_a_rollout_view_asks_for_the_rollout_alone(browser):
    widget = Explorer(TEXT, model="minilm", stages=("rollout",), layer=4)
    rollout = rollout_lqk(widget.trace.pattern_lhqk)
    with widget_page(browser, widget, DRAWN) as page:
        cell = _pick(page, 4, 0, 3, 1)
        assert cell["rollout"] == pytest.approx(float(rollout[4, 3, 1]), rel=1e-6)
        sent = page.evaluate("window.model.log.sent")
        assert asked(sent, 4, "rollout")
        assert {m["part"] for m in sent} == {"rollout"}  # no scores, no queries and keys
        caption = page.locator("figure.ax-panel[data-stage=rollout] .ax-caption").text_content()
        assert "an estimate, not a measurement" in caption
        assert "after layer 4" in caption
        assert page.locator(".ax-title").text_content() == "layer 4, every head averaged"


GRID_PAGE = """<!doctype html><html><head><meta charset="utf-8"></head><body><script>
window.start = async (esm, css, data) => {
  const style = document.createElement("style");
  style.textContent = css;
  document.head.append(style);
  const url = URL.createObjectURL(new Blob([esm], { type: "text/javascript" }));
  const mount = (await import(url)).default;
  const el = document.createElement("div");
  document.body.append(el);
  window.opened = [];
  mount({ data, parentElement: el, key: "grid", setTriggerValue: (_, v) => opened.push(v),
    setStateValue: () => {} });
};
</script></body></html>"""

# A tile's pixels as [luminance, ...] in drawing order (a row across, a column down).
LUMINANCE = """(c) => {
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  const out = [];
  for (let i = 0; i < d.length; i += 4) out.push(0.3 * d[i] + 0.59 * d[i + 1] + 0.11 * d[i + 2]);
  return out;
}"""


def _grid_page(browser, trace, text: str, hide_special: bool):
    """The all-heads grid of ``trace`` (MiniLM: every layer, every head), drawn; yields the
    page and asserts it logged no error."""
    rows = [(layer, list(range(trace.config.n_heads))) for layer in range(trace.config.n_layers)]
    data = grid_data(trace, "minilm", text, rows, {}, hide_special)
    context = browser.new_context(viewport={"width": 1400, "height": 1200})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))

    def answer(route):
        ask = json.loads(route.request.post_data or "{}")
        route.fulfill(body=layer_block(trace, ask["layer"], ask["part"]).data)

    page.route(ORIGIN, lambda route: route.fulfill(body=GRID_PAGE, content_type="text/html"))
    page.route(f"{ORIGIN}{data['api']}", answer)
    page.goto(ORIGIN)
    page.evaluate("(a) => start(...a)", [module("streamlit"), CSS.read_text(), data])
    layers = trace.config.n_layers
    page.wait_for_function(
        f"() => Number(document.querySelector('.ax-heads')?.dataset.drawn) === {layers}",
        timeout=WAIT_MS,
    )
    yield page
    assert errors == []
    context.close()


@pytest.fixture
def grid(browser, model):
    """TEXT's grid, [CLS]/[SEP] hidden: (page, trace)."""
    trace = trace_sentence(model, TEXT)
    for page in _grid_page(browser, trace, TEXT, True):
        yield page, trace


def _tile(page, layer: int, head: int):
    return page.locator(f'canvas.ax-thumb[data-layer="{layer}"][data-head="{head}"]')


def _pin_drawn(page, count: int) -> None:
    page.wait_for_function(
        f"() => Number(document.querySelector('.ax-heads').dataset.pinDrawn) === {count}",
        timeout=WAIT_MS,
    )


def _check_strip(page, strip_of, trace, keep, along: str) -> None:
    """Every tile is one strip of the shown tokens whose brightest pixel and tooltip number are
    the engine's largest weight in it, and whose pixels rise and fall with the engine's."""
    for layer in range(trace.config.n_layers):
        for head in range(trace.config.n_heads):
            tile = _tile(page, layer, head)
            want = strip_of(layer, head)
            size = tile.evaluate("(c) => [c.width, c.height]")
            assert size == ([len(keep), 1] if along == "row" else [1, len(keep)])
            top = json.loads(tile.get_attribute("data-top"))
            assert top["index"] == int(np.argmax(want))
            assert top["value"] == pytest.approx(float(want.max()), abs=1e-6)
    lum = np.array(_tile(page, 2, 3).evaluate(LUMINANCE))
    want = strip_of(2, 3)
    apart = np.abs(want[:, None] - want[None, :]) > 3 / 255
    same_order = np.sign(lum[:, None] - lum[None, :]) == np.sign(want[:, None] - want[None, :])
    assert same_order[apart].all()


def test_pinning_a_token_shows_its_row_then_its_column_in_every_tile(grid):
    page, trace = grid
    keep = visible_tokens(trace.tokens.special_t, True)
    tokens = header(trace)["tokens"]
    pin = tokens.index("it")
    assert [b for b in page.locator(".ax-pin-token").all_text_contents()] == [
        tokens[t] for t in keep
    ]
    button = page.locator(f'.ax-pin-token[data-token="{pin}"]')
    button.focus()
    page.keyboard.press("Enter")  # keyboard reachable: a focused token button pins it
    _pin_drawn(page, 1)
    assert button.get_attribute("aria-pressed") == "true"
    pattern = trace.pattern_lhqk
    _check_strip(page, lambda layer, h: pattern[layer][h][pin, keep], trace, keep, "row")
    note = page.locator(".ax-pin-note").text_content() or ""
    assert f"“it” ({pin}): every tile shows its row" in note
    _tile(page, 2, 3).hover()
    tip = page.locator(".ax-heads .ax-tip").text_content() or ""
    row = pattern[2][3][pin, keep]
    best = tokens[keep[int(np.argmax(row))]]
    assert f"“it” ({pin}) gives most weight to “{best}”" in tip
    assert f"{row.max():.3f}" in tip
    page.locator('[data-along="column"]').click()
    _pin_drawn(page, 2)
    _check_strip(page, lambda layer, h: pattern[layer][h][keep, pin], trace, keep, "column")
    button.click()  # again: unpinned, the thumbnails are back
    _pin_drawn(page, 3)
    assert _tile(page, 0, 0).evaluate("(c) => [c.width, c.height]") == [len(keep), len(keep)]
    assert _tile(page, 0, 0).get_attribute("data-pin") is None


def test_a_pin_on_a_long_sentence_reads_the_pooled_thumbnails(browser, model):
    text = " ".join([TEXT] * 12)  # past 128 tokens: the pooled thumbnails
    trace = trace_sentence(model, text)
    n = trace.n_tokens
    f = -(-n // MAX_TILE)
    pin = n // 2
    for page in _grid_page(browser, trace, text, False):
        page.locator(f'.ax-pin-token[data-token="{pin}"]').click()
        _pin_drawn(page, 1)
        assert (
            f"A pixel there is a block of {f} tokens" in page.locator(".ax-pin-note").text_content()
        )
        for layer in (0, trace.config.n_layers - 1):
            side = -(-n // f)
            block = np.frombuffer(layer_block(trace, layer, "thumbs").data, "<f4")
            thumbs = block.reshape(trace.config.n_heads, side, side)
            for head in (0, 7):
                want = thumbs[head, pin // f]
                tile = _tile(page, layer, head)
                assert tile.evaluate("(c) => [c.width, c.height]") == [side, 1]
                top = json.loads(tile.get_attribute("data-top"))
                assert top["index"] == int(np.argmax(want))
                assert top["value"] == pytest.approx(float(want.max()), rel=1e-6)
                assert "A pixel here is a block of" in tile.get_attribute("data-pin")
