"""AppTest helpers: run app.py on a given page with given URL parameters."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 60  # the first run of a session loads the model


def open_page(page: str | None = None, **query: str) -> AppTest:
    """app.py switched to ``pages/<page>.py`` (home when None), with URL parameters, run once."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for name, value in query.items():
        at.query_params[name] = value
    if page:
        at.switch_page(f"pages/{page}.py")
    return at.run()


@pytest.fixture
def page() -> Callable[..., AppTest]:
    return open_page
