"""Head roles as a person sees them: the badge beside the explorer's heading, the pattern page's
line naming the head's job, and the All heads grid's tooltip, read off the page in Debian's
Chromium against `streamlit run`, each equal to the engine's badge for that head."""

from __future__ import annotations

import functools

import pytest

from attention_core import load_model, trace_sentence
from attention_core.methods.roles import name_heads, role_scores
from scripts.live_app import wait_idle

pytestmark = pytest.mark.browser

TEXT = "the dog saw the dog and the other dog saw the dog too"
QUERY = "the+dog+saw+the+dog+and+the+other+dog+saw+the+dog+too"


@functools.cache
def badges(key: str) -> list[list[str]]:
    """The engine's badge of every head on TEXT, [layer][head]."""
    trace = trace_sentence(load_model(key), TEXT)
    return [[role.badge() for role in row] for row in name_heads(role_scores(trace))]


def heading_badge(page, layer: int, head: int) -> str:
    """The badge beside the explorer's heading once it shows ``layer``/``head``."""
    page.locator(".ax-title", has_text=f"layer {layer}, head {head}").wait_for(timeout=60_000)
    return page.locator(".ax-role").first.inner_text()


def job_line(page) -> str:
    return page.locator("p", has_text="What this head does").first.inner_text()


def test_the_badge_follows_the_head_in_the_explorer_and_on_the_page(app_url, page):
    page.goto(f"{app_url}/pattern?s={QUERY}&layer=4&head=9")
    assert heading_badge(page, 4, 9) == badges("minilm")[4][9]
    wait_idle(page)
    assert badges("minilm")[4][9] in job_line(page)
    page.locator(".ax").first.focus()
    page.keyboard.press("ArrowRight")  # redrawn in the browser, no rerun
    assert heading_badge(page, 4, 10) == badges("minilm")[4][10]
    page.locator("p", has_text=badges("minilm")[4][10]).first.wait_for(timeout=30_000)
    # the page's line, after the view was reported
    assert "layer 4, head 10 is, by the rule" in job_line(page)


def test_a_decoders_badge_is_the_engines(app_url, page):
    page.goto(f"{app_url}/pattern?s={QUERY}&model=smollm2&layer=17&head=3")
    assert heading_badge(page, 17, 3) == badges("smollm2")[17][3]


def test_the_grid_tooltip_names_each_heads_job(app_url, page):
    page.goto(f"{app_url}/all_heads?s={QUERY}")
    page.locator(".ax-heads[data-drawn]").wait_for(timeout=60_000)
    for layer, head in ((1, 3), (5, 11)):
        page.locator(f'.ax-thumb[data-layer="{layer}"][data-head="{head}"]').hover()
        lines = page.locator(".ax-tip").inner_text().split("\n")
        assert lines[:2] == [
            f"layer {layer}, head {head}",
            f"job by the rule: {badges('minilm')[layer][head]}",
        ]
