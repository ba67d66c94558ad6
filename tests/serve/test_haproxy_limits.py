"""HAProxy in front of ./serve.sh's replicas, hardened: no visitor's sentence in any log, each
replica's connections capped, each client address limited (connections at once, requests per
10 s: 429 past them), a body over the upload cap (413) or without a length (411) refused before
a replica reads it, and a config ``haproxy -c`` accepts.

One ./serve.sh for the module, on 127.0.0.1, with its request rate lowered to 1000 per 10 s
(ATTENTION_SERVE_CLIENT_RATE; the default is 10000) so a short bounded loop reaches it; the
connection limit is the real default (500). HAProxy counts a connection closed without a
request as a request, so the 500 idle connections count too. The rate test runs last: past it,
this address is refused for ten seconds. Requests that HAProxy refuses cost the replicas
nothing; every loop and wait is bounded.
"""

from __future__ import annotations

import gzip
import os
import socket
import subprocess
import time
import tomllib
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from scripts.live_app import ROOT, free_port
from scripts.serving import Serve, haproxy_servers, start_serve, stop_serve, wait_ready, wait_until

pytestmark = pytest.mark.serve

RATE = 1000  # requests per 10 s per address, lowered for this module
CONNS = 500  # serve.sh's default: connections at once per address
SERVER_CONNS = 300  # serve.sh's default: connections at once per replica
WAIT_MS = 60_000


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[Serve]:
    out = tmp_path_factory.mktemp("limits") / "serve.out"
    serve = start_serve(free_port(), out, env={"ATTENTION_SERVE_CLIENT_RATE": str(RATE)})
    try:
        assert wait_ready(serve, 240) and serve.proc.poll() is None, serve.text()
        serve.remember_children()
        yield serve
    finally:
        code, left = stop_serve(serve)
        assert code == 0 and not left, (code, left, serve.text())


def ask(port: int, request: str, timeout_s: float = 5.0) -> tuple[int, str]:
    """One raw HTTP/1.1 request on a fresh connection: the answer's status and body (read up
    to its Content-Length, or to the connection's end)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as sock:
        sock.sendall(request.encode())
        reply = b""
        while not _complete(reply) and (chunk := sock.recv(65536)):
            reply += chunk
    head, _, body = reply.decode(errors="replace").partition("\r\n\r\n")
    return int(head.split(" ", 2)[1]), body


def _complete(reply: bytes) -> bool:
    head, found, body = reply.partition(b"\r\n\r\n")
    if not found:
        return False
    for line in head.lower().split(b"\r\n"):
        if line.startswith(b"content-length:"):
            return len(body) >= int(line.split(b":")[1])
    return False


def request(method: str, path: str, *headers: str) -> str:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close", *headers]
    return "\r\n".join(lines) + "\r\n\r\n"


def upload_cap_mb() -> int:
    """The cap serve.sh derives: Streamlit's maxUploadSize (config.toml) plus 2 MB of framing."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    return int(config["server"]["maxUploadSize"]) + 2


def test_haproxy_accepts_the_config_and_caps_each_replicas_connections(served):
    cfg = served.run_dir() / "haproxy.cfg"
    checked = subprocess.run(
        ["haproxy", "-c", "-f", str(cfg)],
        env={**os.environ, "PATH": f"{os.environ.get('PATH', '')}:/usr/sbin"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    servers = haproxy_servers(served)
    assert {name: row["slim"] for name, row in servers.items()} == {
        "r1": str(SERVER_CONNS),
        "r2": str(SERVER_CONNS),
    }


@pytest.mark.browser
def test_no_sentence_reaches_any_log(served, browser):
    """A page opened on a link whose s= carries a sentence: HAProxy logs the path alone, and
    neither it nor the replicas nor the supervisor write the sentence anywhere."""
    word = f"zebrafinch{uuid.uuid4().hex[:8]}"
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.goto(f"http://127.0.0.1:{served.port}/pattern?s=the+{word}+sang", timeout=WAIT_MS)
        page.locator(".ax[data-drawn]").first.wait_for(timeout=WAIT_MS)
        labels = page.locator('.ax-panel[data-stage="pattern"] .ax-cols span').all_inner_texts()
    finally:
        context.close()  # its websocket's line is logged when it closes
    assert any("sang" in label for label in labels), labels
    log = served.run_dir() / "haproxy.log"
    assert wait_until(lambda: "GET /_stcore/stream" in log.read_text(), 10)
    assert " GET /pattern\n" in log.read_text()
    for path in served.run_dir().iterdir():
        if path.suffix in (".log", ".out"):
            assert word not in path.read_text(errors="replace"), path.name
    assert word not in served.text()


def test_streamlits_page_files_are_sent_once_by_a_replica_then_by_haproxys_cache(served):
    """A static file (Streamlit's main bundle) asked for twice as a browser asks (gzip), then
    twice plainly: the same bytes each time as on disk (gzip undone), never a gzipped body to
    a client that did not ask for one, and the repeats answered by HAProxy's cache (its log
    names the server ``<CACHE>``), not by a replica."""
    from streamlit import file_util

    root = Path(file_util.get_static_dir())
    bundle = max((root / "static" / "js").glob("*.js"), key=lambda p: p.stat().st_size)
    path = "/" + bundle.relative_to(root).as_posix()
    url = f"http://127.0.0.1:{served.port}{path}"
    for encoding in ("gzip, deflate, br", "identity"):
        bodies = []
        for _ in range(2):
            ask = urllib.request.Request(url, headers={"Accept-Encoding": encoding})
            with urllib.request.urlopen(ask, timeout=30) as answer:
                raw = answer.read()
                zipped = answer.headers.get("Content-Encoding") == "gzip"
            bodies.append(gzip.decompress(raw) if zipped else raw)
            assert not zipped or "gzip" in encoding
        assert bodies == [bundle.read_bytes()] * 2
    log = served.run_dir() / "haproxy.log"
    assert wait_until(lambda: log.read_text().count("<CACHE> ") >= 2, 10), log.read_text()[-2000:]
    served_by = [line for line in log.read_text().splitlines() if f" GET {path}" in line]
    assert len(served_by) == 4 and sum("/<CACHE> " in line for line in served_by) == 2, served_by


def test_a_body_over_the_cap_or_without_a_length_is_refused_before_a_replica(served):
    cap = upload_cap_mb() * 2**20
    upload = "/_stcore/upload_file/session/file"
    started = time.monotonic()
    status, body = ask(served.port, request("PUT", upload, f"Content-Length: {cap + 1}"))
    assert (status, body) == (413, f"Request body too large: at most {upload_cap_mb()} MB.")
    assert time.monotonic() - started < 5
    status, body = ask(served.port, request("POST", upload, "Transfer-Encoding: chunked"))
    assert (status, body) == (411, "Send the request body with a Content-Length.")
    log = served.run_dir() / "haproxy.log"

    def refused() -> list[str]:
        return [line for line in log.read_text().splitlines() if line.endswith(upload)]

    # HAProxy writes each line when its connection ends: the second may come a moment later
    assert wait_until(lambda: len(refused()) == 2, 10), refused()
    assert all("<NOSRV>" in line for line in refused()), refused()
    # A small body goes through to a replica (whose own guard answers it).
    status, _ = ask(served.port, request("POST", "/api/attention/block", "Content-Length: 0"))
    assert status not in (411, 413, 429, 503), status


def test_without_its_variable_the_fault_hook_is_not_there(served):
    """serve.sh's replicas run without ATTENTION_FAULT_HOOKS: no route wedges them (Streamlit's
    page route, which takes every other path, refuses the POST) and they stay healthy."""
    for number, (_, port) in served.replicas().items():
        status, body = ask(port, request("POST", "/_faults/wedge", "Content-Length: 0"))
        assert status in (404, 405) and "slots" not in body, (number, status, body)
        assert ask(port, request("GET", "/_stcore/health")) == (200, "ok")


def test_too_many_connections_from_one_address_are_answered_429(served):
    held: list[socket.socket] = []
    try:
        for _ in range(CONNS):  # open and idle (HAProxy closes idle ones after 10 s)
            held.append(socket.create_connection(("127.0.0.1", served.port), timeout=5))
        answers: list[tuple[int, str]] = []

        def refused() -> bool:
            answers.append(ask(served.port, request("GET", "/_stcore/health")))
            return answers[-1][0] == 429

        assert wait_until(refused, 5), answers[-3:]
        assert "Too many connections from your address" in answers[-1][1]
    finally:
        for sock in held:
            sock.close()
    assert wait_until(lambda: ask(served.port, request("GET", "/_stcore/health"))[0] == 200, 10)


def test_too_many_requests_from_one_address_are_answered_429(served):
    """Last in the module: HAProxy refuses this address for the next ten seconds."""
    too_big = request("PUT", "/_stcore/upload_file/s/f", f"Content-Length: {2**40}")
    statuses: list[int] = []
    for _ in range(RATE + 50):  # each refused by HAProxy itself (413): no replica works
        status, body = ask(served.port, too_big)
        statuses.append(status)
        if status == 429:
            break
    assert statuses[-1] == 429 and set(statuses[:-1]) == {413}, statuses[-5:]
    assert body == "Too many requests from your address; wait ten seconds and try again."
    assert len(statuses) <= RATE + 1  # the page and health checks above count too
