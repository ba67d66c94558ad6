"""Several visitors prepare the .npz download at once on a 512-token SmolLM2 sentence (a live
server, Chromium): the whole trace (about 0.9 GB of arrays) is never offered; the part each asks
for is written an array at a time into a temporary file under the memory budget, or refused
while the budget has no room for it; each page then links to its file, which the server streams
from disk (server/exports.py); every file that comes back is whole, and the replica's peak
memory stays within 1.5 GB; a normal visitor is served after."""

from __future__ import annotations

import io
import re
import time
from urllib.parse import quote_plus

import numpy as np
import pytest

from tests.hostile.conftest import PEAK_MB, normal_visitor, peak_rss_mb

LONG = " ".join(f"Sentence {i} says something about rivers, banks and boats." for i in range(60))
N_TOKENS = 771  # SmolLM2's tokens of LONG (it reads up to 2,048)
VISITORS = 3
WAIT_S = 240.0  # the first 512-token SmolLM2 pass and ~130 MB files, on a busy machine
PREPARE = re.compile("Prepare Without attention maps")
LINK = re.compile("Download attention_trace_stream.npz")
REFUSED = re.compile("busy|still being written|no room", re.IGNORECASE)


def _open(browser, url):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.goto(f"{url}/pattern?model=smollm2&s={quote_plus(LONG)}")
    page.locator(".ax[data-drawn]").first.wait_for(timeout=WAIT_S * 1000)
    page.get_by_text("The pattern as numbers").first.click()
    page.get_by_role("button", name=PREPARE).wait_for(timeout=WAIT_S * 1000)
    return context, page


def _answered(page) -> bool:
    """The page's Prepare click was answered: a link to its file, or a refusal said."""
    return bool(page.get_by_role("link", name=LINK).count() or page.get_by_text(REFUSED).count())


@pytest.mark.hostile
@pytest.mark.browser
def test_export_clicks_at_once_stay_within_the_memory_bound(browser, hostile_url):
    opened = [_open(browser, hostile_url) for _ in range(VISITORS)]
    try:
        pages = [page for _, page in opened]
        assert not pages[0].get_by_role("button", name=re.compile("All intermediates")).count()
        for page in pages:  # every click before any file is ready
            page.get_by_role("button", name=PREPARE).click(no_wait_after=True)
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline and not all(map(_answered, pages)):
            pages[0].wait_for_timeout(500)
        assert all(map(_answered, pages)), "a Prepare click was not answered within the bound"
        links = [(p, p.get_by_role("link", name=LINK)) for p in pages]
        files = [(p, link.get_attribute("href")) for p, link in links if link.count()]
        assert files, "no visitor got a file"
        for page, href in files:
            got = page.request.get(f"{hostile_url}/{href.lstrip('/')}", timeout=WAIT_S * 1000)
            assert got.status == 200, got.text()[:200]
            with np.load(io.BytesIO(got.body())) as npz:
                assert "hidden" in npz.files and "pattern" not in npz.files
                assert npz["hidden"].shape[1] == N_TOKENS  # the whole text, every token
            again = page.request.get(f"{hostile_url}/{href.lstrip('/')}")
            assert again.status == 404 and "prepare it again" in again.json()["error"]
        print(f"{len(files)} of {VISITORS} files, peak {peak_rss_mb(hostile_url.pid):.0f} MB")
        assert peak_rss_mb(hostile_url.pid) <= PEAK_MB
    finally:
        for context, _ in opened:
            context.close()
    normal_visitor(browser, hostile_url)
