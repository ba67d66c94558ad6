"""A live `streamlit run` server and Debian's Chromium, shared by the browser tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scripts.live_app import CHROMIUM, streamlit_server


def pytest_collection_modifyitems(items):
    if Path(CHROMIUM).exists():
        return
    # test.sh installs Chromium; on CI its absence is a failure, elsewhere a skip.
    if os.environ.get("CI"):
        raise pytest.UsageError(f"{CHROMIUM} is missing: run ./test.sh, which installs it")
    skip = pytest.mark.skip(reason=f"{CHROMIUM} not installed (./test.sh installs it)")
    for item in items:
        if "tests/browser" in str(item.fspath):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def app_url():
    with streamlit_server() as url:
        yield url


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.dialogs = dialogs
    yield page
    context.close()
