"""Token labels in the explorer as a person sees them in a 1280-px-wide window (Debian's
Chromium against the live app): at 40 tokens every label is there, at least 10 px, whole and
clear of its neighbours; at 128 tokens the view says how many labels it left out, and a cell
whose label is hidden still names its tokens on hover. Also what the mask switch says on an
encoder (a what-if) and on a decoder (the model's own)."""

from __future__ import annotations

import itertools
from urllib.parse import quote_plus

import pytest

from attention_core import tokenize
from scripts.live_app import wait_idle
from tests.browser.test_explorer import LIVE, STAGES, STATE, WAIT_MS, canvas_geometry, hover

pytestmark = pytest.mark.browser

SENTENCE = (
    "The quick brown fox jumps over the lazy dog while the river bank was muddy after the "
    "heavy rain and the children played near the old stone bridge until their tired parents "
    "finally called them home today"
)
WORDS = SENTENCE.split()
MIN_FONT_PX = 10.0
# Every label of each axis of each panel: its text, box, font size and whether it is cut off
# along its length (row labels run across, column labels down).
LABELS = """(ax) => Array.from(ax.querySelectorAll('figure.ax-panel'), (fig) => {
    const read = (sel, across) => Array.from(fig.querySelectorAll(sel), (s) => {
        const r = s.getBoundingClientRect();
        return {text: s.textContent, left: r.left, right: r.right, top: r.top,
                bottom: r.bottom, font: parseFloat(getComputedStyle(s).fontSize),
                cut: across ? s.scrollWidth > s.clientWidth : s.scrollHeight > s.clientHeight};
    });
    return {stage: fig.dataset.stage, rows: read('.ax-rows span', true),
            cols: read('.ax-cols span', false)};
})"""


def sentence_of(model, n_tokens: int) -> str:
    """The first words of WORDS (repeated as needed) that make exactly ``n_tokens`` tokens."""
    words: list[str] = []
    for i in range(4 * n_tokens):  # a word is at least one token: bounded
        words.append(WORDS[i % len(WORDS)])
        n = len(tokenize(model, " ".join(words)))
        if n >= n_tokens:
            break
    assert n == n_tokens, f"no prefix of the words makes {n_tokens} tokens"
    return " ".join(words)


@pytest.fixture
def window(browser):
    """A page in a 1280 × 900 window."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    yield context.new_page()
    context.close()


def open_view(page, base: str, query: str):
    page.goto(f"{base}/pattern?{query}")
    page.wait_for_function(f"() => ({STATE})()?.drawn > 0", timeout=WAIT_MS)
    wait_idle(page, WAIT_MS)
    page.wait_for_timeout(300)  # a rerun after the first tell may draw once more
    return page.locator(".ax").last


def assert_apart(boxes: list[dict], low: str, high: str) -> None:
    """Neighbouring label boxes along an axis do not overlap."""
    for a, b in itertools.pairwise(boxes):
        assert a[high] <= b[low] + 0.01, (a, b)


@pytest.mark.parametrize("name", ["minilm", "smollm2"])
def test_every_label_of_a_40_token_sentence_is_readable(app_url, window, request, name):
    model = request.getfixturevalue("model" if name == "minilm" else "smollm2")
    text = sentence_of(model, 40)
    tokens = list(tokenize(model, text).tokens)
    ax = open_view(window, app_url, f"model={name}&s={quote_plus(text)}&layer=1&head=2")
    panels = ax.evaluate(LABELS)
    assert [p["stage"] for p in panels] == list(STAGES)
    for panel in panels:
        for axis, (low, high) in (("rows", ("top", "bottom")), ("cols", ("left", "right"))):
            labels = panel[axis]
            assert [label["text"] for label in labels] == tokens, (panel["stage"], axis)
            assert min(label["font"] for label in labels) >= MIN_FONT_PX
            assert not [label["text"] for label in labels if label["cut"]]
            assert max(label["right"] for label in labels) <= 1280
            assert_apart(labels, low, high)
    assert ax.locator(".ax-labels").is_hidden()  # nothing left out, nothing to say

    # The mask switch says what it is on this model.
    switch = ax.locator("label", has=window.locator("[data-name=causal]"))
    if name == "minilm":
        assert switch.text_content().strip() == "Causal mask (what-if)"
        assert "trained without a mask" in switch.get_attribute("title")
        assert not ax.locator("[data-name=causal]").is_disabled()
    else:
        assert switch.text_content().strip() == "Causal mask (the model's own)"
        assert "trained with this mask" in switch.get_attribute("title")
        assert ax.locator("[data-name=causal]").is_disabled()
    for control in ("scale", "temp"):
        title = ax.locator("label", has=window.locator(f"[data-name={control}]"))
        assert "what-if" in title.get_attribute("title")


def test_at_128_tokens_the_view_says_how_many_labels_it_hid(app_url, window, model):
    text = sentence_of(model, 128)
    tokens = list(tokenize(model, text).tokens)
    ax = open_view(window, app_url, f"s={quote_plus(text)}&layer=1&head=2")
    panels = ax.evaluate(LABELS)
    shown = {len(p[axis]) for p in panels for axis in ("rows", "cols")}
    assert len(shown) == 1  # every axis of every panel keeps the same labels
    kept = shown.pop()
    assert 0 < kept < 128
    note = ax.locator(".ax-labels")
    assert note.is_visible()
    assert note.text_content() == (
        f"{128 - kept} of 128 labels hidden on the rows and on the columns; "
        "hover a cell for its tokens."
    )
    step = -(-128 // kept)  # every step-th token keeps its label
    for panel in panels:
        for axis, (low, high) in (("rows", ("top", "bottom")), ("cols", ("left", "right"))):
            labels = panel[axis]
            assert [label["text"] for label in labels] == tokens[::step]
            assert min(label["font"] for label in labels) >= MIN_FONT_PX
            assert_apart(labels, low, high)
    # A token whose label is hidden: hovering its cell names it. (Cells are ~2 px here: the
    # pointer may land a cell off, so the one between two labels is aimed at.)
    assert step >= 3
    aim = 20 * step + step // 2
    q, k, _, _ = hover(window, "pattern", aim, aim, canvas_geometry(window, "pattern"))
    assert abs(q - aim) <= 1 and abs(k - aim) <= 1 and q % step and k % step, (q, k, step)
    tip = window.evaluate(f"() => ({LIVE}).querySelector('.ax-tip').textContent")
    assert f"query “{tokens[q]}” ({q}) → key “{tokens[k]}” ({k})" in tip
