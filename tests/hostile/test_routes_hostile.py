"""Hostile requests to the app's HTTP routes (the explorer's block route, the cross-attention
route) behind the guard (server/guard.py): each is answered 4xx with a JSON ``{"error"}``, never
a 5xx, and the routes keep serving.

In-process (the fast tier): hypothesis over the routes' JSON (any value, deep nesting, lone
surrogates as raw JSON text, wrong types, huge numbers), bodies in chunks past the cap,
missing, forged and expired page tokens, other sites' origins; through Starlette's TestClient
on the app's routes and middleware. Live (marked hostile and browser): the same attacks against
``streamlit run app.py``, each ending with a normal visitor charting a new sentence.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from http.client import HTTPConnection
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route
from starlette.testclient import TestClient

import ui.routes
from explorer import PATH
from explorer.page_token import HEADER, mint
from server.guard import FAILED, MAX_URL, UPLOAD_FRAMING, Guard
from tests.hostile.conftest import normal_visitor

CAP = ui.routes.TRACES.max_body
SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
ANSWER_S = 5.0  # every hostile request answered within this (the bound)


@pytest.fixture(scope="module")
def client():
    app = Starlette(
        routes=ui.routes.ROUTES,
        middleware=[Middleware(Guard, body_caps=ui.routes.BODY_CAPS, uploads=lambda: 2**20)],
    )
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def fresh_token() -> str:
    """A valid page token of a new session (each example its own rate)."""
    return mint(f"hostile-{uuid.uuid4().hex}")


def refused(response, statuses: tuple[int, ...] = (400, 403, 404, 409, 413, 429)) -> str:
    """Assert a 4xx answer with a plain JSON sentence; return the sentence."""
    assert response.status_code in statuses, (response.status_code, response.text[:200])
    assert response.headers["content-type"].startswith("application/json")
    message = response.json()["error"]
    assert isinstance(message, str) and 0 < len(message) < 200
    assert "Traceback" not in message and " at 0x" not in message and ".py" not in message
    return message


def post(client, path: str, body: bytes | str, token: str | None = None, **headers: str):
    sent: dict[str, str | bytes] = {"Content-Type": "application/json", **headers}
    if token is not None:  # a header carries bytes: any text is sent as UTF-8
        sent[HEADER] = token if token.isascii() else token.encode()
    return client.post(path, content=body, headers=sent)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=30,
)
NOT_A_PART = st.one_of(JSON, st.text(max_size=10)).filter(lambda p: p not in ("scores", "qk"))


@SETTINGS
@given(value=JSON, path=st.just(PATH))
def test_any_json_value_is_refused_as_json(client, value, path):
    refused(post(client, path, json.dumps(value), fresh_token()))


@SETTINGS
@given(
    model=st.one_of(JSON, st.sampled_from(["minilm", "smollm2", "whisper", "../minilm"])),
    text=st.one_of(JSON, st.just("")),
    layer=st.one_of(JSON, st.integers(min_value=-(10**40), max_value=10**40)),
    part=NOT_A_PART,
)
def test_wrong_types_and_values_are_400(client, model, text, layer, part):
    body = json.dumps({"model": model, "text": text, "layer": layer, "part": part})
    refused(post(client, PATH, body, fresh_token()), (400,))


@SETTINGS
@given(depth=st.integers(min_value=1, max_value=CAP // 2), opener=st.sampled_from("[{"))
def test_deep_nesting_is_400_or_413(client, depth, opener):
    closer = {"[": "]", "{": "}"}[opener]
    inner = '"a":' if opener == "{" else ""
    body = (opener + inner) * depth + "1" + closer * depth
    refused(post(client, PATH, body, fresh_token()), (400, 413))


@SETTINGS
@given(
    before=st.text(max_size=20),
    surrogate=st.integers(min_value=0xD800, max_value=0xDFFF),
    after=st.text(max_size=20),
)
def test_a_lone_surrogate_as_raw_json_text_is_400(client, before, surrogate, after):
    text = json.dumps(before)[1:-1] + f"\\u{surrogate:04x}" + json.dumps(after)[1:-1]
    body = f'{{"model": "minilm", "text": "x{text}", "layer": 0, "part": "scores"}}'
    assert "not valid Unicode" in refused(post(client, PATH, body, fresh_token()), (400,))


@SETTINGS
@given(number=st.sampled_from(["1e999", "-1e999", "1" * 5000, "-1", "1.5", "NaN", "Infinity"]))
def test_huge_and_odd_numbers_are_400(client, number):
    body = f'{{"model": "minilm", "text": "the bank", "layer": {number}, "part": "scores"}}'
    refused(post(client, PATH, body, fresh_token()), (400,))


@SETTINGS
@given(clip=st.one_of(JSON, st.text(max_size=80)), frames=JSON, layer=JSON)
def test_any_cross_attention_request_for_a_clip_not_held_is_refused(client, clip, frames, layer):
    # Whisper's part: no clip is held in this app, so a well-formed request is 404, the rest 400.
    body = {"model": "whisper", "clip": clip, "layer": layer, "part": "cross", "frames": frames}
    refused(post(client, PATH, json.dumps(body), fresh_token()), (400, 404))


@SETTINGS
@given(chunk=st.integers(min_value=1, max_value=2**16), path=st.just(PATH))
def test_a_body_past_the_cap_in_chunks_is_413(client, chunk, path):
    cap = ui.routes.BODY_CAPS[path]
    chunks = (b" " * chunk for _ in range(cap // chunk + 2))  # no Content-Length: streamed
    message = refused(post(client, path, chunks, fresh_token()), (413,))
    assert f"{cap:,} bytes" in message


def forged(session: str) -> str:
    """A token of ``session`` with its signature's last digit changed."""
    token = mint(session)
    return token[:-1] + ("1" if token.endswith("0") else "0")


@SETTINGS
@given(
    token=st.one_of(
        st.none(),
        st.text(max_size=300),
        st.builds(forged, st.text(min_size=1, max_size=40)),
        st.builds(lambda days: mint("old", now=time.time() - days * 86_400), st.integers(2, 10**4)),
    ),
    path=st.just(PATH),
)
def test_missing_forged_and_expired_tokens_are_403(client, token, path):
    body = json.dumps({"model": "minilm", "text": "the bank", "layer": 0, "part": "scores"})
    assert "page token" in refused(post(client, path, body, token), (403,))


@SETTINGS
@given(host=st.from_regex(r"[a-z0-9.-]{1,30}(:[0-9]{1,5})?", fullmatch=True))
def test_another_sites_origin_is_403(client, host):
    body = json.dumps({"model": "minilm", "text": "the bank", "layer": 0, "part": "scores"})
    origin = f"https://{host}"
    if urlsplit(origin).netloc == "testserver":
        return
    assert "own pages only" in refused(
        post(client, PATH, body, fresh_token(), Origin=origin), (403,)
    )
    response = post(client, PATH, body, fresh_token(), **{"Sec-Fetch-Site": "cross-site"})
    assert "own pages only" in refused(response, (403,))


def test_the_routes_still_serve_after_all_of_it(client):
    body = json.dumps({"model": "minilm", "text": "the bank", "layer": 0, "part": "scores"})
    response = post(client, PATH, body, fresh_token())
    assert response.status_code == 200 and len(response.content) == 4 * 12 * 4 * 4


# --- live: the same attacks against `streamlit run app.py` ------------------------------------

LIVE = [pytest.mark.hostile, pytest.mark.browser]


def page_token(browser, url: str) -> str:
    """The token the app's pattern page hands its browser, as a visitor copies it from the
    browser's tools (read off the explorer's own request)."""
    context = browser.new_context()
    try:
        page = context.new_page()
        with page.expect_request(lambda r: PATH in r.url, timeout=60_000) as asked:
            page.goto(f"{url}/pattern?s=the+bank+was+steep")
        return asked.value.headers[HEADER.lower()]
    finally:
        context.close()


def live_post(url: str, path: str, body: bytes, token: str, **headers: str) -> tuple[int, bytes]:
    parts = urlsplit(url)
    conn = HTTPConnection(parts.hostname, parts.port, timeout=ANSWER_S * 6)
    try:
        sent = {"Content-Type": "application/json", HEADER: token, **headers}
        conn.request("POST", path, body=body, headers=sent)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


@pytest.mark.hostile
@pytest.mark.browser
def test_live_a_lone_surrogate_twice(browser, hostile_url):
    token = page_token(browser, hostile_url)
    body = b'{"model": "minilm", "text": "x\\ud800", "layer": 0, "part": "scores"}'
    for _ in range(2):
        started = time.monotonic()
        status, answer = live_post(hostile_url, PATH, body, token)
        assert status == 400 and "not valid Unicode" in json.loads(answer)["error"]
        assert time.monotonic() - started < ANSWER_S
    normal_visitor(browser, hostile_url)


def send_chunked(url: str, path: str, total: int, token: str) -> tuple[bytes, float, int]:
    """POST ``total`` bytes in 64 KB chunks (Transfer-Encoding: chunked) on a raw socket,
    reading as it goes; (the answer's first bytes, seconds to them, bytes sent)."""
    parts = urlsplit(url)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/json\r\n"
        f"{HEADER}: {token}\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    chunk = b"10000\r\n" + b" " * 0x10000 + b"\r\n"
    sent, answer, started = 0, b"", time.monotonic()
    with socket.create_connection((parts.hostname, parts.port), timeout=ANSWER_S) as sock:
        sock.sendall(head.encode())
        sock.setblocking(False)
        while sent < total and not answer and time.monotonic() - started < ANSWER_S * 2:
            try:
                answer = sock.recv(4096)
                break
            except BlockingIOError:
                pass
            try:
                sent += sock.send(chunk)  # may send part of it: the count is what matters
            except BlockingIOError:
                time.sleep(0.005)  # the server is not reading: wait for its answer
            except (BrokenPipeError, ConnectionResetError):
                break
        took = time.monotonic() - started
        sock.settimeout(ANSWER_S)
        answer += read_to_end(sock)
    return answer, took, sent


def read_to_end(sock: socket.socket) -> bytes:
    """What the server sends until it closes the connection (its answers here say close)."""
    got = b""
    with contextlib.suppress(ConnectionResetError, TimeoutError):
        while part := sock.recv(4096):
            got += part
    return got


@pytest.mark.hostile
@pytest.mark.browser
def test_live_a_64_mb_body_in_chunks_is_413_at_once(browser, hostile_url):
    token = page_token(browser, hostile_url)
    before = rss_mb(hostile_url.pid)
    answer, took, sent = send_chunked(hostile_url, PATH, 64 * 2**20, token)
    status_line, _, rest = answer.partition(b"\r\n")
    assert b" 413 " in status_line, answer[:300]
    assert f"{CAP:,} bytes".encode() in rest
    assert took < ANSWER_S, f"the 413 came after {took:.1f} s"
    assert sent < 16 * 2**20  # the server stopped reading long before 64 MB
    grown = rss_mb(hostile_url.pid) - before
    assert grown < 64, (before, grown)
    visitor = normal_visitor(browser, hostile_url)
    print(
        f"\n64 MB: 413 after {took:.2f} s, {sent / 2**20:.1f} MB sent, RSS +{grown:.1f} MB, "
        f"a new sentence then charted in {visitor:.1f} s"
    )


def flood_request(url: str, i: int, token: str) -> tuple[int, float, bytes]:
    """One request of the flood: good ones, bad ones, strangers' ones, in turn."""
    good = {"model": "minilm", "text": "the bank was steep", "layer": i % 6, "part": "scores"}
    bodies = [
        (json.dumps(good).encode(), token, {}),
        (b'{"model": "minilm", "text": "x\\udfff", "layer": 0, "part": "qk"}', token, {}),
        (b"[" * 30_000, token, {}),
        (json.dumps(good).encode(), "", {}),
        (json.dumps(good).encode(), token, {"Origin": "https://elsewhere.example"}),
    ]
    body, sent_token, headers = bodies[i % len(bodies)]
    started = time.monotonic()
    status, answer = live_post(url, PATH, body, sent_token, **headers)
    return status, time.monotonic() - started, answer


@pytest.mark.hostile
@pytest.mark.browser
def test_live_a_flood_from_one_page(browser, hostile_url):
    token = page_token(browser, hostile_url)
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda i: flood_request(hostile_url, i, token), range(300)))
    statuses = [status for status, _, _ in results]
    assert all(status < 500 for status in statuses), sorted(set(statuses))
    for status, took, answer in results:
        if status >= 400:
            assert took < ANSWER_S and json.loads(answer)["error"], (status, took, answer)
    assert statuses.count(200) >= 40  # the page's own requests served
    counts = ", ".join(f"{s}: {statuses.count(s)}" for s in sorted(set(statuses)))
    slowest = max(took for _, took, _ in results)
    visitor = normal_visitor(browser, hostile_url)
    print(f"\nflood: {counts}; slowest answer {slowest:.2f} s; a new sentence in {visitor:.1f} s")


def raw_get(url: str, target: str) -> bytes:
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=ANSWER_S) as sock:
        sock.sendall(
            f"GET {target} HTTP/1.1\r\nHost: {parts.netloc}\r\nConnection: close\r\n\r\n".encode()
        )
        return read_to_end(sock)


@pytest.mark.hostile
@pytest.mark.browser
def test_live_over_long_links_are_refused(browser, hostile_url):
    started = time.monotonic()
    answer = raw_get(hostile_url, "/pattern?s=" + "a+" * 10_000)  # 20 KB: past the parser's
    assert answer.split(b" ")[1][:1] == b"4", answer[:200]  # 16 KB: refused there, 400 or 431
    long = raw_get(hostile_url, "/pattern?s=" + "a" * (MAX_URL + 1))  # within it: the guard's
    assert long.startswith(b"HTTP/1.1 414 ") and b"This link is too long" in long, long[:300]
    assert time.monotonic() - started < ANSWER_S
    normal_visitor(browser, hostile_url)
    lines = [reply.partition(b"\r\n")[0].decode() for reply in (answer, long)]
    print(f"\n20 KB link: {lines[0]}; {MAX_URL + 1} bytes: {lines[1]}")


def test_a_failure_inside_a_route_is_json_without_its_details():
    async def broken(request):
        raise RuntimeError(f"/srv/app/secret.py failed at {hex(id(request))}")

    app = Starlette(
        routes=[Route("/api/broken", broken, methods=["POST"])],
        middleware=[Middleware(Guard, body_caps={})],
    )
    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.post("/api/broken", content=b"{}")
    assert response.status_code == 500
    assert response.json() == {"error": FAILED}


def test_uploads_keep_streamlits_own_limit():
    from streamlit import config

    guard = Guard(Starlette(), body_caps=ui.routes.BODY_CAPS)
    allowed = config.get_option("server.maxUploadSize") * 2**20
    assert guard.cap("/_stcore/upload_file/session/file") == allowed + UPLOAD_FRAMING
    assert guard.cap(PATH) == CAP
