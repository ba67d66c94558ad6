"""Shared fixtures. Tests never touch the network: the hub is switched off before any import."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest

from attention_core import Model, load_model


@pytest.fixture(scope="session")
def model() -> Model:
    """The packaged all-MiniLM-L6-v2, loaded once per test session."""
    return load_model()


@pytest.fixture(scope="session")
def smollm2():
    """The packaged SmolLM2-135M-Instruct (GGUF), loaded once per test session."""
    return load_model("smollm2")


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium, one for the whole session: Playwright's sync API runs one event loop per
    process, so the browser and serving tests share this instead of starting their own."""
    from playwright.sync_api import sync_playwright

    from scripts.live_app import launch_chromium

    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        yield browser
        browser.close()
