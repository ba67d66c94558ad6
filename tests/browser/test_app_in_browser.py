"""The app as a person uses it: Debian's Chromium against `streamlit run` on 127.0.0.1."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from attention_core import load_model, tokenize
from scripts.live_app import streamlit_server, wait_idle

pytestmark = pytest.mark.browser


def tick_labels(page, chart: int = -1) -> list[str]:
    """The x-axis tick labels of one Plotly chart on the page, as drawn (read atomically)."""
    return page.evaluate(
        """(i) => {
            const plots = Array.from(document.querySelectorAll('.js-plotly-plot'));
            const plot = plots.at(i);
            return plot ? Array.from(plot.querySelectorAll('.xtick text'), t => t.textContent) : [];
        }""",
        chart,
    )


def wait_for_labels(page, ok, timeout_s: float = 30.0) -> list[str]:
    """Poll the last chart's tick labels until ``ok(labels)`` holds (bounded in time)."""
    deadline = time.monotonic() + timeout_s
    labels = tick_labels(page)
    while not ok(labels) and time.monotonic() < deadline:
        page.wait_for_timeout(200)
        labels = tick_labels(page)
    return labels


def assert_no_error_box(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0


def type_sentence(page, text: str) -> None:
    box = page.get_by_role("textbox", name="Your sentence")
    box.fill(text)
    box.press("Enter")
    wait_idle(page)


def explorer_labels(page, timeout_s: float = 30.0) -> list[str]:
    """The softmax panel's column labels, once the attention explorer has drawn (bounded)."""
    page.locator(".ax[data-drawn]").first.wait_for(timeout=timeout_s * 1000)
    return page.locator('.ax-panel[data-stage="pattern"] .ax-cols span').all_inner_texts()


def wait_for_explorer_labels(page, ok, timeout_s: float = 30.0) -> list[str]:
    """Poll the explorer's labels until ``ok(labels)`` holds (bounded in time)."""
    deadline = time.monotonic() + timeout_s
    labels = explorer_labels(page, timeout_s)
    while not ok(labels) and time.monotonic() < deadline:
        page.wait_for_timeout(200)
        labels = explorer_labels(page, timeout_s)
    return labels


def test_fresh_server_deep_link_renders_the_page(browser):
    # The first request to a new server goes straight to a page (a shared link).
    with streamlit_server() as url:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{url}/pattern?s=the+river+bank&layer=1&head=4")
        assert explorer_labels(page) == ["[CLS]", "the", "river", "bank", "[SEP]"]
        assert page.locator(".ax-title").inner_text() == "layer 1, head 4"
        assert_no_error_box(page)
        page.close()


def test_type_a_sentence_move_a_slider_and_read_the_labels(app_url, page):
    page.goto(f"{app_url}/pattern?layer=2&head=0")
    explorer_labels(page)
    type_sentence(page, "Dirty quantum plumbing leaks")
    expected = ["[CLS]", "dirty", "quantum", "plumbing", "leaks", "[SEP]"]
    assert wait_for_explorer_labels(page, lambda got: got == expected) == expected
    # The sidebar's Head slider on another page; the explorer follows it back here.
    page.locator('[data-testid="stSidebarNav"] a', has_text="Value updates").click()
    head = page.get_by_role("slider", name="Head")
    head.wait_for(timeout=30_000)
    head.focus()
    head.press("ArrowRight")
    wait_idle(page)
    page.locator('[data-testid="stSidebarNav"] a', has_text="Attention pattern").click()
    page.locator(".ax-title", has_text="layer 2, head 1").wait_for(timeout=30_000)
    assert re.search(r"head=1", page.url)
    assert "s=Dirty+quantum+plumbing+leaks" in page.url
    assert_no_error_box(page)


def test_sentence_follows_the_user_to_another_page(app_url, page):
    page.goto(f"{app_url}/?s=Jane+visits+Africa")
    wait_idle(page)
    page.locator('[data-testid="stSidebarNav"] a', has_text="Attention pattern").click()
    expected = ["[CLS]", "jane", "visits", "africa", "[SEP]"]
    assert wait_for_explorer_labels(page, lambda got: got == expected) == expected
    assert_no_error_box(page)


def test_script_and_html_payloads_stay_text(app_url, page):
    payload = "<script>alert(1)</script> <img src=x onerror=alert(2)> **bold** $x$"
    page.goto(f"{app_url}/pattern")
    explorer_labels(page)
    type_sentence(page, payload)
    tokens = list(tokenize(load_model(), payload).tokens)
    assert tokens[:4] == ["[CLS]", "<", "script", ">"]

    def thinned(got: list[str]) -> bool:  # every step-th token when they do not all fit
        return bool(got) and got == tokens[:: -(-len(tokens) // len(got))]

    labels = wait_for_explorer_labels(page, thinned)
    assert thinned(labels), labels
    assert page.dialogs == []
    assert page.locator("img[src=x]").count() == 0  # pierces the explorer's shadow root too
    assert page.get_by_role("textbox", name="Your sentence").input_value() == payload
    assert_no_error_box(page)


def test_click_a_head_in_the_grid_to_open_it(app_url, page):
    page.goto(f"{app_url}/all_heads?s=Jane+visits+Africa")
    page.locator(".ax-heads[data-drawn]").wait_for(timeout=30_000)
    tile = page.locator('.ax-thumb[data-layer="1"][data-head="3"]')
    tile.hover()
    assert page.locator(".ax-tip").inner_text().startswith("layer 1, head 3\njob by the rule: ")
    tile.click()
    page.locator(".ax-title", has_text="layer 1, head 3").wait_for(timeout=30_000)
    expected = ["[CLS]", "jane", "visits", "africa", "[SEP]"]
    assert wait_for_explorer_labels(page, lambda got: got == expected) == expected
    assert "layer=1" in page.url and "head=3" in page.url and "s=Jane+visits+Africa" in page.url
    assert_no_error_box(page)


def test_walk_the_whole_learn_tour(app_url, page):
    from ui.tour import N_STEPS, titles

    names = titles()
    page.goto(f"{app_url}/learn?s=The+river+bank+was+muddy")
    wait_idle(page)
    for step in range(1, N_STEPS + 1):
        heading = page.get_by_role("heading", name=f"{step}. {names[step - 1]}")
        heading.wait_for(timeout=60_000)
        wait_idle(page)
        progress = page.locator('[data-testid="stProgress"]')
        assert f"Step {step} of {N_STEPS}" in progress.inner_text(timeout=10_000)
        drawn = page.locator(
            ".js-plotly-plot .main-svg, [data-testid='stDataFrame'], .ax[data-drawn]"
        )  # a Plotly chart, a table or a drawn attention explorer
        try:  # the run is over, but the browser may still be loading the chart library
            drawn.first.wait_for(timeout=30_000)
        except PlaywrightTimeout:
            pytest.fail(f"step {step} shows no chart, table or explorer")
        nav = page.locator('[data-testid="stSidebarNav"] a', has_text="Learn step by step")
        assert nav.count() == 1  # the sidebar's page list stays on screen on every step
        # Below the step, so they may arrive after its chart: counted with expect, which retries
        further = page.get_by_role("link", name=re.compile("Explore further"))
        expect(further).to_have_count(1, timeout=30_000)
        engineers = page.locator('[data-testid="stExpander"] details')  # closed, one per step
        expect(engineers).to_have_count(1, timeout=30_000)
        assert engineers.get_attribute("open") is None
        assert_no_error_box(page)
        next_button = page.locator(".st-key-learn_next button")  # the top "Next"
        if step < N_STEPS:
            next_button.click()
        else:
            assert next_button.is_disabled()
    assert f"step={N_STEPS}" in page.url
