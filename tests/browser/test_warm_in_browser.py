"""A replica's shared work is done before it answers (ui/warm.py): a first visit on the default
sentence, on Start here and on Pattern, each text model, finds the models loaded and its trace,
opening view and head roles computed, so the server computes nothing for it (no forward pass,
no cache miss), and no run is a rerun the visitor did not cause. Read from the server's own
profile (server/profile.py, ATTENTION_PROFILE), as a student's browser opens each page."""

from __future__ import annotations

import json
import time

import pytest

from scripts.live_app import streamlit_server, wait_idle

pytestmark = pytest.mark.browser

VISITS = ["/pattern", "/pattern?model=smollm2", "/", "/?model=smollm2"]


def test_a_first_visit_on_the_default_sentence_computes_nothing(browser, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_PROFILE", str(tmp_path))
    monkeypatch.delenv("ATTENTION_WARM", raising=False)
    with streamlit_server() as url:
        answered = time.time()  # the warm's own passes come before: not a visitor's
        for path in VISITS:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            try:
                page = context.new_page()
                page.goto(f"{url}{path}", timeout=120_000)
                if path.startswith("/pattern"):
                    page.locator(".ax[data-drawn]").first.wait_for(timeout=120_000)
                wait_idle(page, 120_000)
                time.sleep(1.0)  # a rerun the page causes after drawing would come now
            finally:
                context.close()
    records = [
        json.loads(line)
        for path in tmp_path.glob("profile-*.jsonl")
        for line in path.read_text().splitlines()
        if json.loads(line)["t"] >= answered
    ]
    runs = [r for r in records if r["kind"] == "run"]
    assert len(runs) == len(VISITS), runs  # one run each, none an app's rerun
    assert all(r["why"] == "arrival" and r["how"] == "success" for r in runs), runs
    assert sorted(r["page"] for r in runs) == ["home", "home", "pattern", "pattern"]
    computed = [r for r in records if r["kind"] in ("pass", "cache miss")]
    assert computed == [], computed
