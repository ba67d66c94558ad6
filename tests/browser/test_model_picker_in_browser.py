"""The sidebar's model picker in Debian's Chromium against `streamlit run app.py`: picking
Whisper on the pattern page opens Listen (the sidebar, the URL and the page on Whisper), and the
pattern page, opened again from the navigation, shows SmolLM2 with the layer, head and sentence
it had, and no causal what-if (SmolLM2's mask is its own, never written into the URL)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from scripts.live_app import wait_idle
from tests.browser.conftest import heard_line

pytestmark = pytest.mark.browser

WAIT_MS = 90_000
SENTENCE = "the river bank"


def _params(page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def _sidebar_model(page) -> str:
    box = page.locator("[data-testid=stSidebar] [data-testid=stSelectbox]", has_text="Model")
    return box.locator("input").input_value()


def test_whisper_opens_listen_and_the_text_page_gets_its_model_back(app_url, page):
    page.goto(f"{app_url}/pattern?model=smollm2&s=the+river+bank&layer=5&head=3")
    page.locator(".ax .ax-title").first.wait_for(timeout=WAIT_MS)
    wait_idle(page, WAIT_MS)
    assert "causal" not in _params(page)  # the decoder's own mask is not a what-if
    page.locator("[data-testid=stSidebar] [data-testid=stSelectbox]").first.click()
    page.get_by_role("option", name="Whisper tiny.en (speech → text)").click()
    page.wait_for_selector("text=Whisper heard:", timeout=WAIT_MS)
    wait_idle(page, WAIT_MS)
    assert urlparse(page.url).path == "/listen" and heard_line(page)
    assert "Whisper tiny.en" in _sidebar_model(page)
    assert _params(page)["model"] == "whisper" and _params(page)["layer"] == "3"
    page.locator(".ax-cross[data-drawn]").wait_for(timeout=WAIT_MS)
    page.get_by_role("link", name="Attention pattern").click()
    page.wait_for_url("**/pattern**", timeout=WAIT_MS)
    page.locator(".ax .ax-title").first.wait_for(timeout=WAIT_MS)
    wait_idle(page, WAIT_MS)
    got = _params(page)
    assert (got["model"], got["layer"], got["head"], got["s"]) == ("smollm2", "5", "3", SENTENCE)
    assert "causal" not in got
    assert "SmolLM2" in _sidebar_model(page)
