"""A class behind ./serve.sh --replicas 2 (issue 14), as ``python -m bench classroom`` drives it:
thirty browser sessions (every third one on SmolLM2) arrive within 10 s, each on /pattern with
a sentence of its own, make moves in the attention explorer, type a new sentence, then another
while a heavy visitor pastes 512-token texts in a loop; two more on Listen (Whisper) upload a
new clip in each of those two rounds, and are shown what the engine hears in it.

Asserted: every session drew its first view, every move and every new sentence; the balancer
spread the sessions over both replicas; no error box, no page error, no HTTP 5xx; every session's
row labels are its own sentence's tokens and every block it fetched was for one of its own texts
(no cross-session leak); serve.sh stops everything it started. Timings are printed (run with -s),
never asserted: this machine is shared. Bounded: every wait in bench/classroom.py has a timeout.
"""

from __future__ import annotations

import shutil

import pytest

from bench import classroom
from scripts.live_app import free_port
from scripts.serving import start_serve, stop_serve, wait_ready

pytestmark = [pytest.mark.browser, pytest.mark.serve, pytest.mark.load]

N_SESSIONS = 30
N_LISTENERS = 2  # on Listen (Whisper), uploading a new clip in each new-sentence round


def test_a_class_of_thirty_with_a_heavy_visitor(browser, model, smollm2, tmp_path, ready_timeout_s):
    serve = start_serve(free_port(), tmp_path / "serve.out")
    fig, passed = None, False
    try:
        assert wait_ready(serve, ready_timeout_s) and serve.proc.poll() is None, serve.text()
        serve.remember_children()
        listening = classroom.listeners(N_LISTENERS, str(tmp_path))
        fig = classroom.run(
            browser, serve, model, N_SESSIONS, heavy=True, decoder=smollm2, listening=listening
        )
        classroom.report(fig)
        passed = True
    finally:
        code, left = stop_serve(serve)
        if passed:
            shutil.rmtree(serve.run_dir(), ignore_errors=True)
    errors = {s.number: s.errors for s in fig.sessions if s.errors}
    assert not errors, errors
    heard = {x.number: x.errors for x in fig.listeners if x.errors}  # the engine's words shown
    assert not heard, heard
    clips = [(len(x.new_clip.quiet), len(x.new_clip.busy)) for x in fig.listeners]
    assert clips == [(1, 1)] * N_LISTENERS
    assert fig.heavy is not None and not fig.heavy.errors, fig.heavy.errors
    assert sorted(fig.per_replica) == ["r1", "r2"], fig.per_replica
    assert {s.model.config.key for s in fig.sessions} == {"minilm", "smollm2"}
    for s in fig.sessions:
        assert s.first_draw_s is not None and len(s.redraws_s) == len(classroom.MOVES), s.number
        assert (len(s.new_sentence.quiet), len(s.new_sentence.busy)) == (1, 1), s.number
    assert code == 0, f"serve.sh exited with {code} on SIGTERM:\n{serve.text()}"
    assert not left, f"serve.sh left these processes running (killed now): {left}"
