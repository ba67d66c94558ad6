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
def engines(model, smollm2):
    """Both packaged models by their keys, for tests run on each."""
    return {"minilm": model, "smollm2": smollm2}


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


# Fixtures that start Chromium or a server, and the marker (tier) each test using them must carry
# so that ./test.sh's fast tier never starts one by accident.
TIER_OF_FIXTURE = {"browser": "browser", "app_url": "browser", "hostile_url": "hostile"}


def pytest_collection_modifyitems(items):
    unmarked = [
        f"{item.nodeid} uses {name} but is not marked {tier}"
        for item in items
        for name, tier in TIER_OF_FIXTURE.items()
        if name in getattr(item, "fixturenames", ()) and item.get_closest_marker(tier) is None
    ]
    if unmarked:
        raise pytest.UsageError("\n".join(unmarked))
