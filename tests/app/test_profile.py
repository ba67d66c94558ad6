"""Where a replica's CPU goes (server/profile.py): nothing written unless ATTENTION_PROFILE names
a folder; then each step a JSON line with its CPU and wall time, a run's record saying why it ran
from the widget states its browser sent, the steps inside it named in it, and never a text."""

from __future__ import annotations

import json

import numpy as np
import pytest

from server import profile


@pytest.fixture()
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(profile.ENV, str(tmp_path))
    return tmp_path


def _records(folder) -> list[dict]:
    return [
        json.loads(line)
        for p in folder.glob("*.jsonl")
        for line in p.read_text().split("\n")
        if line
    ]


def test_off_by_default_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv(profile.ENV, raising=False)
    with profile.step("pass", "minilm"):
        pass
    assert profile.folder() is None and not list(tmp_path.iterdir())


def test_a_step_is_timed_on_its_thread_and_written(folder):
    with profile.step("pass", "minilm", bytes=12):
        a = np.random.default_rng(0).standard_normal((300, 300))
        for _ in range(20):
            a = a @ a.T / 300
    (record,) = _records(folder)
    assert record["kind"] == "pass" and record["name"] == "minilm" and record["bytes"] == 12
    assert record["cpu_ms"] > 0 and record["wall_ms"] > 0


def test_a_run_says_why_it_ran_and_what_ran_inside_it(folder):
    session = "a-session-id"
    profile.run_started(session, fragment=False)
    with profile.step("cache miss", "head_roles"):
        pass
    profile.run_stopped("success", "pattern")
    profile.run_started(session, fragment=True)
    profile.run_sent(session, {"$$ID-abc-layer": b"1", "$$ID-abc-head": b"0"})
    profile.run_stopped("success", "pattern")
    profile.run_started(session, fragment=True)
    profile.run_sent(session, {"$$ID-abc-layer": b"2", "$$ID-abc-head": b"0"})
    profile.run_stopped("success", "pattern")
    profile.run_started(session, fragment=False)  # st.rerun(): no states sent
    profile.run_stopped("rerun", "pattern")
    runs = [r for r in _records(folder) if r["kind"] == "run"]
    assert [r["why"] for r in runs] == [
        "arrival",
        "fragment, widgets first sent: head, layer",
        "fragment, widgets: layer",
        "no widget states sent (a rerun the app asked for)",
    ]
    assert runs[0]["steps"][0].startswith("cache miss: head_roles")
    assert runs[0]["session"] == session[:8] and runs[-1]["how"] == "rerun"
    miss = next(r for r in _records(folder) if r["kind"] == "cache miss")
    assert miss["session"] == session[:8]
