"""Several visitors click the .npz download at once on a 512-token SmolLM2 sentence (a live
server, Chromium): the whole trace (about 0.9 GB of arrays) is never
offered; the part each asks for is written an array at a time under the memory budget, or
refused while the budget has no room for it (the button is enabled again either way); every
file that comes back is whole, and the replica's peak memory stays within 1.5 GB; a normal
visitor is served after."""

from __future__ import annotations

import io
import re
import time
from urllib.parse import quote_plus

import numpy as np
import pytest

from tests.hostile.conftest import PEAK_MB, normal_visitor, peak_rss_mb

LONG = " ".join(f"Sentence {i} says something about rivers, banks and boats." for i in range(60))
VISITORS = 3
WAIT_S = 240.0  # the first 512-token SmolLM2 pass and ~130 MB files, on a busy machine
STREAM = re.compile("Without attention maps")


def _open(browser, url):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    page.goto(f"{url}/pattern?model=smollm2&s={quote_plus(LONG)}")
    page.locator(".ax[data-drawn]").first.wait_for(timeout=WAIT_S * 1000)
    page.get_by_text("The pattern as numbers").first.click()
    page.get_by_role("button", name=STREAM).wait_for(timeout=WAIT_S * 1000)
    return context, page


def _idle(page) -> bool:
    """The page's export button is enabled again: its click was answered."""
    return page.get_by_role("button", name=STREAM).is_enabled()


@pytest.mark.hostile
@pytest.mark.browser
def test_export_clicks_at_once_stay_within_the_memory_bound(browser, hostile_url):
    opened = [_open(browser, hostile_url) for _ in range(VISITORS)]
    try:
        pages = [page for _, page in opened]
        assert not pages[0].get_by_role("button", name=re.compile("All intermediates")).count()
        downloads: list = []
        for page in pages:
            page.on("download", lambda d: downloads.append(d))
        for page in pages:  # every click before any file is back
            page.get_by_role("button", name=STREAM).click(no_wait_after=True)
        # a second click of the same visitor: the page disables a button whose file is being
        # made, and the server writes one export per visitor at a time (tests/app/test_exports)
        deadline = time.monotonic() + WAIT_S
        # each click answered (a file, or refused while busy), and at least one file back
        while time.monotonic() < deadline and not (downloads and all(map(_idle, pages))):
            pages[0].wait_for_timeout(500)
        assert all(_idle(page) for page in pages), "an export still runs after the bound"
        assert downloads, "no visitor got a file"
        for download in downloads:
            with open(download.path(), "rb") as file, np.load(io.BytesIO(file.read())) as npz:
                assert "hidden" in npz.files and "pattern" not in npz.files
                assert npz["hidden"].shape[1] == 512  # the sentence, cut at the model's limit
        print(f"{len(downloads)} of {VISITORS} files, peak {peak_rss_mb(hostile_url.pid):.0f} MB")
        assert peak_rss_mb(hostile_url.pid) <= PEAK_MB
    finally:
        for context, _ in opened:
            context.close()
    normal_visitor(browser, hostile_url)
