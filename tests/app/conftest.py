"""AppTest helpers: run navigation.py (the script app.py serves) on a page, with URL parameters."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import streamlit.testing.v1.app_test as app_test
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "navigation.py")
TIMEOUT = 60  # the first run of a session loads the model
LONG_RUN_S = 600  # a SmolLM2 pass of 1,000+ tokens on a busy two-core machine: a bound


class _RoutedPagesManager(PagesManager):
    """AppTest resets Streamlit's legacy pages/ routing before every run, so each run after a
    switch_page would skip navigation.py. A live server uses st.navigation routing after its
    first run; make AppTest do the same so tests see what users see (ui.router covers the legacy
    case)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        PagesManager.uses_pages_directory = False


app_test.PagesManager = _RoutedPagesManager


def open_page(page: str | None = None, timeout: float = TIMEOUT, **query: str) -> AppTest:
    """navigation.py switched to ``pages/<page>.py`` (home when None), with URL parameters, run
    once (each run within ``timeout`` seconds)."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for name, value in query.items():
        at.query_params[name] = value
    if page:
        at.switch_page(f"pages/{page}.py")
    return at.run()


def url_param(at: AppTest, name: str) -> str | None:
    """The URL parameter ``name`` as the page wrote it (None when it is left out)."""
    value = at.query_params.get(name)
    return value[0] if isinstance(value, list) else value


@pytest.fixture
def page() -> Callable[..., AppTest]:
    return open_page


def explorer_report(at: AppTest, key: str, view: dict) -> AppTest:
    """Run ``at`` as the browser does when the visitor changes the view in the explorer mounted
    with ``key``: its state value {"view": view} (AppTest cannot click inside a component)."""
    [element] = [c for c in at.get("bidi_component") if c.proto.id.endswith(f"-{key}")]
    states = at._tree.get_widget_states()
    state = next((w for w in states.widgets if w.id == element.proto.id), None)
    if state is None:
        state = states.widgets.add()
        state.id = element.proto.id
    state.json_value = json.dumps({"view": view})
    at._run(states)
    return at


# Elements whose words a learner reads (besides formulas, metrics and table columns).
LEARNER_ELEMENTS = {"Markdown", "Caption", "Info", "Warning", "Success"}


def learner_texts(node, formulas: bool = False) -> list[str]:
    """Every text a learner reads under ``node`` (e.g. ``at.main``), metrics and table columns
    included, outside the closed "For engineers" expanders; LaTeX formulas too with
    ``formulas`` (their subscripts read like code names to a pattern looking for those)."""
    name = type(node).__name__
    if name == "Expander":
        return []
    if name in LEARNER_ELEMENTS or (formulas and name == "Latex"):
        return [node.value]
    if name == "Metric":
        return [node.label, node.value]
    if name == "Dataframe":
        return [str(c) for c in node.value.columns]
    children = getattr(node, "children", {}).values()
    return [t for child in children for t in learner_texts(child, formulas)]


def engineers_text(at: AppTest) -> str:
    """Everything written inside the "For engineers" expanders (metrics by label and value)."""
    texts = []
    for box in at.expander:
        for child in box.children.values():
            if type(child).__name__ == "Metric":
                texts.append(child.label)
            if hasattr(child, "value"):
                texts.append(child.value)
    return " ".join(str(t) for t in texts)


@pytest.fixture
def room_for_verify():
    """A verify check needs more memory than the default budget (server.budget: 512 MB, what a
    1.5 GB replica has beside its models) sets aside: a bigger server's, for the test using it."""
    from ui.cache import trace_store

    store = trace_store()
    total, store.total = store.total, 4 << 30
    yield
    store.total = total


def wait_until(predicate: Callable[[], bool], timeout_s: float = 10.0) -> None:
    """Poll ``predicate`` every 10 ms until it holds; fail after ``timeout_s`` (bounded)."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)
