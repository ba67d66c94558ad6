"""A live `streamlit run` server and Debian's Chromium, shared by the browser tests."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from scripts.live_app import CHROMIUM, CHROMIUM_ARGS, streamlit_server


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


@contextmanager
def own_chromium(browser, args: Sequence[str], permissions: Sequence[str] = ()) -> Iterator:
    """A page in a second Chromium (from the session's Playwright) started with ``args`` on top
    of the usual flags, ``permissions`` granted; JavaScript errors collect in ``page.errors``."""
    chromium = browser.browser_type.launch(executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *args])
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    if permissions:
        context.grant_permissions(list(permissions))
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.errors = errors
    try:
        yield page
    finally:
        context.close()
        chromium.close()


def heard_line(page) -> str:
    """The Listen page's transcript line ("Whisper heard: …")."""
    return page.locator("p", has_text="Whisper heard:").first.inner_text()
