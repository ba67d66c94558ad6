"""A replica that cannot compute is seen and replaced: ./serve.sh --replicas 2 with the fault
hook on (ATTENTION_FAULT_HOOKS=1, server/faults.py), a browser on one replica, that replica
wedged through the hook (every forward-pass slot held for good) while its visitor asks for a new
sentence. Its health check turns 503 (server/health.py); HAProxy must take it out within 10 s,
serve.sh's supervisor must stop it and start it again, healthy within 30 s; meanwhile a new
visitor's sentence is charted by the other replica (tests/hostile/conftest.py:normal_visitor).
The measured seconds are printed (run with -s). Everything on 127.0.0.1; every wait bounded.
"""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

from scripts.live_app import ServerUrl, free_port
from scripts.serving import (
    haproxy_servers,
    http_status,
    srv_cookie,
    start_serve,
    stop_serve,
    wait_ready,
    wait_until,
)
from tests.hostile.conftest import normal_visitor

pytestmark = [pytest.mark.browser, pytest.mark.serve]

WAIT_MS = 60_000  # one page load on a busy 2-core machine
OUT_S = 10  # the targets: out of rotation within 10 s, back within 30 s
BACK_S = 30


def wedge(port: int) -> dict:
    """The fault hook of the replica on ``port`` (straight, not through HAProxy)."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/_faults/wedge", method="POST")
    with urllib.request.urlopen(request, data=b"", timeout=10) as reply:
        return json.loads(reply.read())


def test_a_wedged_replica_is_taken_out_restarted_and_others_served(
    browser, tmp_path, ready_timeout_s
):
    port = free_port()
    serve = start_serve(port, tmp_path / "serve.out", env={"ATTENTION_FAULT_HOOKS": "1"})
    front = f"http://127.0.0.1:{port}"
    try:
        assert wait_ready(serve, ready_timeout_s) and serve.proc.poll() is None, serve.text()
        serve.remember_children()
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.goto(f"{front}/pattern?s=the+river+bank+was+muddy", timeout=WAIT_MS)
        page.locator(".ax[data-drawn]").first.wait_for(timeout=WAIT_MS)
        name = srv_cookie(context)
        assert name in ("r1", "r2"), context.cookies()
        replica, other = int(name[1]), 3 - int(name[1])
        old_pid, replica_port = serve.replicas()[replica]

        wedged = time.monotonic()
        assert wedge(replica_port) == {"slots": 2, "held": 2}
        # The page's visitor asks for a new sentence: its pass waits behind the held slots.
        box = page.get_by_role("textbox", name="Your sentence")
        box.fill("a sentence for a wedged replica")
        box.press("Enter")
        assert wait_until(
            lambda: haproxy_servers(serve)[name]["status"].startswith("DOWN"),
            OUT_S,
            lambda: page.wait_for_timeout(100),
        ), (haproxy_servers(serve)[name], serve.text())
        out_s = time.monotonic() - wedged

        # Meanwhile (the wedged replica down or restarting) a new visitor is served by the other.
        url = ServerUrl(front)
        url.pid = serve.replicas()[other][0]
        charted_s = normal_visitor(browser, url)

        def back() -> bool:
            pid = serve.replicas()[replica][0]
            return pid != old_pid and haproxy_servers(serve)[name]["status"] == "UP"

        assert wait_until(back, BACK_S - (time.monotonic() - wedged)), serve.text()
        back_s = time.monotonic() - wedged
        assert http_status(f"http://127.0.0.1:{replica_port}/_stcore/health") == 200
        log = serve.text()
        assert f"replica {replica} (pid {old_pid}) failed 3 health checks in a row" in log, log
        assert "slots held and a request left waiting" in log, log
        print(
            f"\nwedged replica {replica}: out of rotation after {out_s:.1f} s, restarted and"
            f" back in after {back_s:.1f} s; a new visitor charted in {charted_s:.1f} s meanwhile"
        )
        context.close()
    finally:
        code, left = stop_serve(serve)
    assert code == 0, f"serve.sh exited with {code} on SIGTERM:\n{serve.text()}"
    assert not left, f"serve.sh left these processes running (killed now): {left}"
