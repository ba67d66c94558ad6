"""The app as a person uses it: Debian's Chromium against `streamlit run` on 127.0.0.1."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from scripts.live_app import streamlit_server, wait_for_charts, wait_idle

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


def test_fresh_server_deep_link_renders_the_page(browser):
    # The first request to a new server goes straight to a page (a shared link).
    with streamlit_server() as url:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{url}/pattern?s=the+river+bank&layer=1&head=4")
        wait_for_charts(page, 4)
        assert_no_error_box(page)
        assert page.get_by_text("Attention pattern · layer 1, head 4").count() == 1
        assert tick_labels(page) == ["[CLS]", "the", "river", "bank", "[SEP]"]
        page.close()


def test_type_a_sentence_move_a_slider_and_read_the_labels(app_url, page):
    page.goto(f"{app_url}/pattern")
    wait_for_charts(page, 4)
    type_sentence(page, "Dirty quantum plumbing leaks")
    expected = ["[CLS]", "dirty", "quantum", "plumbing", "leaks", "[SEP]"]
    assert wait_for_labels(page, lambda got: got == expected) == expected
    head = page.get_by_role("slider", name="Head")
    head.focus()
    head.press("ArrowRight")
    wait_idle(page)
    page.get_by_text("Attention pattern · layer 2, head 1").wait_for(timeout=30_000)
    assert re.search(r"head=1", page.url)
    assert "s=Dirty+quantum+plumbing+leaks" in page.url
    assert_no_error_box(page)


def pattern_row(page, row: int) -> list[float]:
    """One row of the softmax pattern (the page's fourth chart) as Plotly holds it."""
    return page.evaluate(
        "(r) => Array.from(document.querySelectorAll('.js-plotly-plot')[3]._fullData[0].z[r])", row
    )


def test_page_controls_rerun_their_fragment_and_keep_the_url(app_url, page):
    # The temperature, switches and cell picker live in st.fragment: AppTest reruns the whole
    # script, so only a browser sees the fragment-only reruns.
    page.goto(f"{app_url}/pattern?s=the+river+bank&layer=1&head=4&q=1&k=2")
    wait_for_charts(page, 4)
    page.wait_for_function(
        "() => document.querySelectorAll('.js-plotly-plot')[3]?._fullData", timeout=30_000
    )
    before = pattern_row(page, 1)
    temp = page.get_by_role("slider", name="Softmax temperature")
    temp.focus()
    temp.press("ArrowRight")
    page.wait_for_function(
        "(b) => JSON.stringify(Array.from(document.querySelectorAll('.js-plotly-plot')[3]"
        "._fullData[0].z[1])) !== b",
        arg=str(before).replace(" ", ""),
        timeout=30_000,
    )
    wait_idle(page)
    after = pattern_row(page, 1)
    assert abs(sum(after) - 1) < 1e-4 and max(after) < max(before)  # hotter softmax: flatter
    assert "temp=1.05" in page.url and "layer=1" in page.url and "head=4" in page.url
    assert page.get_by_text("Attention pattern · layer 1, head 4").count() == 1
    arithmetic = page.locator('[data-testid="stMarkdownContainer"]', has_text="q·k for")
    assert "“the” → “river”" in arithmetic.inner_text()
    page.get_by_role("combobox", name="Query token (row)").click()
    page.keyboard.type("3: bank")
    page.keyboard.press("Enter")
    page.wait_for_function("() => location.search.includes('q=3')", timeout=30_000)
    wait_idle(page)
    assert "“bank” → “river”" in arithmetic.inner_text()
    assert "÷ 1.05" in arithmetic.inner_text()  # the fragment got the current temperature
    assert_no_error_box(page)


def test_sentence_follows_the_user_to_another_page(app_url, page):
    page.goto(f"{app_url}/?s=Jane+visits+Africa")
    wait_idle(page)
    page.locator('[data-testid="stSidebarNav"] a', has_text="Attention pattern").click()
    wait_for_charts(page, 4)
    expected = ["[CLS]", "jane", "visits", "africa", "[SEP]"]
    assert wait_for_labels(page, lambda got: got == expected) == expected
    assert_no_error_box(page)


def test_script_and_html_payloads_stay_text(app_url, page):
    payload = "<script>alert(1)</script> <img src=x onerror=alert(2)> **bold** $x$"
    page.goto(f"{app_url}/pattern")
    wait_for_charts(page, 4)
    type_sentence(page, payload)
    head = ["[CLS]", "<", "script", ">", "alert", "(", "1", ")", "<", "/", "script", ">"]
    labels = wait_for_labels(page, lambda got: got[: len(head)] == head)
    assert labels[: len(head)] == head
    assert page.dialogs == []
    assert page.locator("img[src=x]").count() == 0
    assert page.get_by_role("textbox", name="Your sentence").input_value() == payload
    assert_no_error_box(page)


def test_click_a_head_in_the_grid_to_open_it(app_url, page):
    page.goto(f"{app_url}/all_heads?s=Jane+visits+Africa")
    wait_for_charts(page, 1)
    wait_idle(page)
    # The grid's click targets are one scatter marker per head, carrying (layer, head).
    box = page.evaluate(
        """() => {
            const plot = document.querySelector('.js-plotly-plot');
            const trace = plot.data.findIndex(t => t.type === 'scatter');
            const i = plot.data[trace].customdata.findIndex(c => c[0] === 1 && c[1] === 3);
            const points = plot.querySelectorAll('.scatterlayer .trace')[0]
                .querySelectorAll('.point');
            const r = points[i].getBoundingClientRect();
            return {x: r.x + r.width / 2, y: r.y + r.height / 2, found: i};
        }"""
    )
    assert box["found"] >= 0
    page.mouse.click(box["x"], box["y"])
    page.get_by_text("Attention pattern · layer 1, head 3").wait_for(timeout=30_000)
    wait_for_charts(page, 4)
    expected = ["[CLS]", "jane", "visits", "africa", "[SEP]"]
    assert wait_for_labels(page, lambda got: got == expected) == expected
    assert "layer=1" in page.url and "head=3" in page.url and "s=Jane+visits+Africa" in page.url
    assert_no_error_box(page)


def test_walk_the_whole_learn_tour(app_url, page):
    from ui.learn_text import N_STEPS, TITLES

    page.goto(f"{app_url}/learn?s=The+river+bank+was+muddy")
    wait_idle(page)
    for step in range(1, N_STEPS + 1):
        heading = page.get_by_role("heading", name=f"{step}. {TITLES[step - 1]}")
        heading.wait_for(timeout=60_000)
        wait_idle(page)
        progress = page.locator('[data-testid="stProgress"]')
        assert f"Step {step} of {N_STEPS}" in progress.inner_text(timeout=10_000)
        drawn = page.locator(".js-plotly-plot .main-svg, [data-testid='stDataFrame']")
        try:  # the run is over, but the browser may still be loading the chart library
            drawn.first.wait_for(timeout=30_000)
        except PlaywrightTimeout:
            pytest.fail(f"step {step} shows no chart or table")
        assert page.locator('[data-testid="stSidebarNav"] a').count() == 8
        assert page.get_by_role("link", name=re.compile("Explore further")).count() == 1
        assert_no_error_box(page)
        next_button = page.locator(".st-key-learn_next button")  # the top "Next"
        if step < N_STEPS:
            next_button.click()
        else:
            assert next_button.is_disabled()
    assert f"step={N_STEPS}" in page.url
