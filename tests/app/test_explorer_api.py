"""The explorer's HTTP route, POST /api/attention/block, through Starlette's TestClient on the
app's routes behind its guard (server/guard.py), as app.py serves them.

A good request (with the page token a page hands its browser) answers with the engine's raw
float32 bytes exactly; a bad one with 400 and a plain reason in JSON, after which the route
still answers; a request that is not from the app's own page is refused (403), a page past its
rate is told to wait (429), and a request its page replaced is dropped (409); the sentence is
data, never markup."""

from __future__ import annotations

import asyncio
import html
import json
import threading
import time

import numpy as np
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.testclient import TestClient

import ui.routes
from attention_core import trace_sentence
from attention_core.core.functional import attention_steps
from attention_core.methods.pack import header, layer_block
from explorer import PATH
from explorer.page_token import HEADER, mint
from server import api
from server.guard import Guard
from server.trace_store import Superseded, TraceStore
from server.visitors import Buckets, Refused, admit
from tests.app.conftest import open_page
from ui.cache import MODELS, model_error
from ui.params import MAX_CHARS

MODEL = "minilm"
SENTENCE = "The river bank was muddy"
PAYLOAD = "<img src=x onerror=alert(1)> <b>bold</b> <script>alert(2)</script> \"'&"


def app(routes=ui.routes.ROUTES) -> Starlette:
    """The routes behind the guard, as app.py serves them."""
    return Starlette(routes=routes, middleware=[Middleware(Guard, body_caps=ui.routes.BODY_CAPS)])


@pytest.fixture(scope="module")
def token():
    """The token the pattern page hands its browser (its Streamlit session, signed)."""
    at = open_page("pattern", s=SENTENCE)
    [element] = at.get("bidi_component")
    return json.loads(element.proto.json)["token"]


@pytest.fixture(scope="module")
def client(token):
    with TestClient(app(), headers={HEADER: token}) as client:
        yield client


@pytest.fixture(scope="module")
def trace(model):
    return trace_sentence(model, SENTENCE)


def post(client, body, **kwargs):
    if not isinstance(body, bytes | str):
        body = json.dumps(body)
    return client.post(PATH, content=body, headers={"Content-Type": "application/json"}, **kwargs)


def good(**changes):
    return {"model": MODEL, "text": SENTENCE, "layer": 2, "part": "scores", **changes}


@pytest.mark.parametrize("part", ["scores", "qk"])
@pytest.mark.parametrize("layer", [0, 2, 5])
def test_good_request_returns_the_engines_bytes(client, trace, layer, part):
    response = post(client, good(layer=layer, part=part))
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/octet-stream"
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["content-encoding"] == "identity"  # kept out of gzip: raw float32
    assert response.content == layer_block(trace, layer, part).data
    if part == "scores":
        got = np.frombuffer(response.content, "<f4").reshape(trace.scores_lhqk[layer].shape)
        np.testing.assert_array_equal(got, trace.scores_lhqk[layer])


def test_the_text_is_taken_literally(client, model):
    # Markup and quotes are part of the sentence: the bytes are those of that exact text's
    # trace, not of an escaped or stripped one (which would tokenize differently).
    response = post(client, good(text=PAYLOAD, layer=1))
    assert response.status_code == 200, response.text
    assert response.content == layer_block(trace_sentence(model, PAYLOAD), 1, "scores").data
    escaped = layer_block(trace_sentence(model, html.escape(PAYLOAD)), 1, "scores").data
    assert response.content != escaped
    tokens = trace_sentence(model, PAYLOAD).tokens.tokens
    assert {"<", ">", "script", "alert"} <= set(tokens)


TOO_LONG = "a " * (MAX_CHARS // 2) + "a"  # MAX_CHARS + 1 characters, body well under MAX_BODY

BAD = [
    ("not json", b"layer=1&part=scores", "body must be JSON"),
    ("not utf-8", b"\xff\xfe{}", "body must be JSON"),
    ("empty body", b"", "body must be JSON"),
    ("a JSON list", [1, 2], "body must be a JSON object"),
    ("JSON null", b"null", "body must be a JSON object"),
    ("unknown model", good(model="gpt-2"), f"model must be one of {MODEL}"),
    ("model path", good(model="/etc/passwd"), f"model must be one of {MODEL}"),
    ("no model", {"text": SENTENCE, "layer": 0, "part": "scores"}, "model must be one of"),
    ("empty text", good(text=""), f"text must be 1 to {MAX_CHARS:,} characters"),
    ("blank text", good(text=" \n\t "), f"text must be 1 to {MAX_CHARS:,} characters"),
    ("text not a string", good(text=["the", "bank"]), "text must be 1 to"),
    ("text too long", good(text=TOO_LONG), f"text must be 1 to {MAX_CHARS:,} characters"),
    ("layer too big", good(layer=6), "layer 6 is outside 0..5"),
    ("layer negative", good(layer=-1), "layer -1 is outside 0..5"),
    ("layer huge", good(layer=10**30), "is outside 0..5"),
    ("layer bool", good(layer=True), "layer must be a whole number"),
    ("layer str", good(layer="1"), "layer must be a whole number"),
    ("layer float", good(layer=1.0), "layer must be a whole number"),
    ("layer missing", {"model": MODEL, "text": SENTENCE, "part": "scores"}, "whole number"),
    ("unknown part", good(part="pattern"), "part must be one of scores, qk"),
    ("part missing", {"model": MODEL, "text": SENTENCE, "layer": 0}, "part must be one of"),
    (
        "lone surrogate",
        b'{"model": "minilm", "text": "x\\ud800", "layer": 0, "part": "qk"}',
        "not valid Unicode",
    ),
]


def error_of(response) -> str:
    """The plain sentence of a refusal (JSON {"error": ...})."""
    assert response.headers["content-type"].startswith("application/json")
    message = response.json()["error"]
    assert "Traceback" not in message and "<" not in message and "/" not in message
    assert len(message) < 200
    return message


@pytest.mark.parametrize(("body", "message"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_request_is_400_with_a_plain_reason(client, trace, body, message):
    response = post(client, body)
    assert response.status_code == 400
    assert message in error_of(response)
    # and the route keeps answering
    after = post(client, good(layer=0))
    assert after.status_code == 200
    assert after.content == layer_block(trace, 0, "scores").data


HEAD = {"head": 4, "stage": "pattern", "settings": {"scale": True, "temp": 1.0, "causal": False}}


@pytest.mark.parametrize("part", ["map", "tile"])
def test_a_head_map_or_tile_is_the_engines_pattern(client, trace, part):
    # A short sentence's map pools 1 × 1 blocks: the mean and the max are the pattern itself.
    n = trace.n_tokens
    response = post(client, good(layer=3, part=part, window=[0, n, 0, n], **HEAD))
    assert response.status_code == 200, response.text
    got = np.frombuffer(response.content, "<f4")
    want = np.asarray(trace.pattern_lhqk[3][4])
    planes = got.reshape(2, n, n) if part == "map" else got.reshape(1, n, n)
    for plane in planes:
        np.testing.assert_array_equal(plane, want)


def test_a_switch_is_computed_on_the_server(client, trace):
    n = trace.n_tokens
    switched = HEAD | {"settings": {"scale": True, "temp": 2.0, "causal": True}}
    response = post(client, good(layer=1, part="tile", window=[0, n, 0, n], **switched))
    assert response.status_code == 200, response.text
    got = np.frombuffer(response.content, "<f4").reshape(n, n)
    want = attention_steps(np.asarray(trace.scores_lhqk[1][4]), 32, temperature=2.0, causal=True)
    np.testing.assert_array_equal(got, want.pattern)


def test_the_roles_come_as_json(client, trace):
    response = post(client, good(part="roles", layer=0))
    assert response.status_code == 200, response.text
    assert json.loads(response.content) == header(trace)["roles"]


HEAD_BAD = [
    ("no stage", {"head": 0, "settings": HEAD["settings"], "window": [0, 2, 0, 2]}, "stage"),
    ("settings missing", HEAD | {"settings": None, "window": [0, 2, 0, 2]}, "settings must be"),
    (
        "temp too high",
        HEAD | {"settings": HEAD["settings"] | {"temp": 50}, "window": [0, 2, 0, 2]},
        "temperature 50.0 is outside",
    ),
    ("window short", HEAD | {"window": [0, 2]}, "window must be four whole numbers"),
    ("window reversed", HEAD | {"window": [5, 2, 0, 2]}, "is not inside"),
    ("window past the text", HEAD | {"window": [0, 99, 0, 2]}, "is not inside 0..7 tokens"),
    ("head too big", HEAD | {"head": 12, "window": [0, 2, 0, 2]}, "head 12 is not one of"),
]


@pytest.mark.parametrize(
    ("fields", "message"), [b[1:] for b in HEAD_BAD], ids=[b[0] for b in HEAD_BAD]
)
def test_a_bad_map_request_is_400_with_a_plain_reason(client, fields, message):
    response = post(client, good(part="map", **fields))
    assert response.status_code == 400
    assert message in error_of(response)
    tile = post(client, good(part="tile", **(HEAD | {"window": [0, 300, 0, 2]})))
    assert tile.status_code == 400 and "more than 256 tokens a side" in error_of(tile)


def test_text_of_exactly_max_chars_is_accepted(client, model):
    text = ("the bank " * MAX_CHARS)[:MAX_CHARS]
    response = post(client, good(text=text, layer=5, part="qk"))
    assert response.status_code == 200, response.text
    # cut at 512 tokens by the engine: [h, 512, 32] queries then keys
    assert len(response.content) == 2 * 4 * 12 * 512 * 32


def test_only_post_is_routed(client):
    response = client.get(PATH)
    assert response.status_code == 405
    assert error_of(response) == "This address takes POST requests only."


def test_a_body_over_the_cap_is_413_before_it_is_read(client):
    cap = ui.routes.TRACES.max_body
    response = post(client, good(text="x" * (cap + 1)))
    assert response.status_code == 413
    assert f"{cap:,} bytes" in error_of(response)
    sent = []

    def chunks():  # no Content-Length: counted as it streams, and not read past the cap
        for _ in range(64):
            sent.append(1)
            yield b" " * 65536

    response = client.post(PATH, content=chunks())
    assert response.status_code == 413 and f"{cap:,} bytes" in error_of(response)
    assert post(client, good(layer=0)).status_code == 200


def test_a_lone_surrogate_is_refused_before_any_work():
    store = TraceStore(2**30)
    traces = api.Traces(MODELS, model_error, lambda *a, **k: store.get("k", lambda: None))
    body = b'{"model": "minilm", "text": "x\\ud800", "layer": 0, "part": "scores"}'
    with pytest.raises(ValueError, match="not valid Unicode"):
        api.parse_request(traces, body)
    assert len(store) == 0 and store.running == 0


STRANGERS = [
    ("no token", {HEADER: ""}, "no valid page token"),
    ("forged token", {HEADER: mint("someone") + "0"}, "no valid page token"),
    ("another key's token", {HEADER: "s.20000." + "0" * 64}, "no valid page token"),
    ("expired token", {HEADER: mint("someone", now=0)}, "no valid page token"),
    ("another site", {"Origin": "https://elsewhere.example"}, "the app's own pages only"),
    ("a sandboxed page", {"Origin": "null"}, "the app's own pages only"),
    ("cross-site fetch", {"Sec-Fetch-Site": "cross-site"}, "the app's own pages only"),
]


@pytest.mark.parametrize(
    ("headers", "message"), [s[1:] for s in STRANGERS], ids=[s[0] for s in STRANGERS]
)
def test_a_request_not_from_the_apps_page_is_403(client, headers, message):
    response = client.post(PATH, content=json.dumps(good()), headers=headers)
    assert response.status_code == 403
    assert message in error_of(response)


def test_the_pages_own_origin_is_served(client, trace):
    same = {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"}
    response = client.post(PATH, content=json.dumps(good()), headers=same)
    assert response.status_code == 200
    assert response.content == layer_block(trace, 2, "scores").data


def test_a_token_of_a_session_this_replica_never_saw_is_served(trace):
    # a failover: another replica minted it with the secret serve.sh gives every replica
    with TestClient(app(), headers={HEADER: mint("a-session-of-another-replica")}) as other:
        response = post(other, good())
    assert response.status_code == 200
    assert response.content == layer_block(trace, 2, "scores").data


def scope_with(headers: dict[str, str]) -> dict:
    raw = [(k.lower().encode(), v.encode()) for k, v in {"host": "testserver", **headers}.items()]
    return {"type": "http", "method": "POST", "path": PATH, "headers": raw}


def test_a_page_past_its_rate_is_429_and_served_again_later():
    buckets = Buckets(burst=3, rate=1.0)
    request = Request(scope_with({HEADER: mint("busy")}))
    assert [admit(request, buckets) for _ in range(3)] == ["busy"] * 3
    with pytest.raises(Refused) as refused:
        admit(request, buckets)
    assert refused.value.status == 429 and "wait a few seconds" in refused.value.message
    assert admit(Request(scope_with({HEADER: mint("another")})), buckets) == "another"
    assert buckets.take("busy", now=10**9)  # refilled after a while


def test_a_request_its_page_replaced_is_409():
    # A waiting pass whose session asked for something newer: the trace store's Superseded
    store = TraceStore(2**30)

    def get_trace(model, text, page):
        return store.get((model, text), lambda: None, page[0], lambda: False)

    traces = api.Traces(MODELS, model_error, get_trace)
    with TestClient(app(api.routes(traces)), headers={HEADER: mint("s")}) as client:
        response = post(client, good())
    assert response.status_code == 409
    assert error_of(response) == api.REPLACED
    assert store.running == 0 and len(store) == 0


def test_the_route_charges_the_pages_session_and_drops_what_it_no_longer_wants(model):
    gone = ("gone", lambda: False)
    with pytest.raises(Superseded):
        api.block_bytes(ui.routes.TRACES, MODEL, "a sentence nobody asked", 0, "scores", gone)
    data = api.block_bytes(ui.routes.TRACES, MODEL, SENTENCE, 1, "qk", ("here", lambda: True))
    assert data == layer_block(trace_sentence(model, SENTENCE), 1, "qk").data


def test_a_client_that_left_is_seen():
    messages = [{"type": "http.request", "body": b"{}", "more_body": False}]

    async def receive():
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def run() -> bool:
        request = Request(scope_with({}), receive)
        await request.body()
        gone = threading.Event()
        await asyncio.wait_for(api.watch(request, gone), timeout=5)
        return gone.is_set()

    assert asyncio.run(run())


def test_parse_request_returns_the_fields():
    body = json.dumps(good(text=PAYLOAD, layer=4, part="qk")).encode()
    assert api.parse_request(ui.routes.TRACES, body) == (MODEL, PAYLOAD, 4, "qk")


def call(app, body: bytes, leave_after_s: float) -> list[dict]:
    """One POST to ``PATH`` through the ASGI app from a client that closes the connection
    ``leave_after_s`` after sending its body; the messages the app sent."""
    headers = [
        (b"content-type", b"application/json"),
        (HEADER.lower().encode(), mint("s").encode()),
    ]
    scope = {**scope_with({}), "headers": [(b"host", b"testserver"), *headers], "query_string": b""}
    sent: list[dict] = []
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def run() -> None:
        started = asyncio.get_running_loop().time()

        async def receive() -> dict:
            if messages:
                return messages.pop(0)
            if asyncio.get_running_loop().time() - started < leave_after_s:
                await asyncio.sleep(leave_after_s)  # cancelled by each look (is_disconnected)
            return {"type": "http.disconnect"}

        async def send(message: dict) -> None:
            sent.append(message)

        await asyncio.wait_for(app(scope, receive, send), timeout=30)

    asyncio.run(run())
    return sent


def test_a_request_whose_client_left_is_dropped_before_its_work(model):
    store, computed, release = TraceStore(2**30, slots=1), [], threading.Event()

    def hold():  # the one slot, busy until released
        release.wait(30)
        return trace_sentence(model, "held")

    holder = threading.Thread(target=store.get, args=("held", hold))
    holder.start()
    deadline = time.monotonic() + 30
    while store.running == 0 and time.monotonic() < deadline:
        release.wait(0.01)
    assert store.running == 1

    def get_trace(model_name, text, page):
        def compute():
            computed.append(text)
            return trace_sentence(model, text)

        return store.get((model_name, text), compute, *page)

    traces = api.Traces(MODELS, model_error, get_trace)
    try:
        sent = call(Starlette(routes=api.routes(traces)), json.dumps(good()).encode(), 0.3)
    finally:
        release.set()
        holder.join(30)
    assert sent[0]["status"] == api.GONE_CLIENT and computed == []
    assert json.loads(sent[1]["body"]) == {"error": api.LEFT}


def test_a_model_that_cannot_load_is_400_without_its_servers_paths():
    def broken(name: str) -> str:
        return f"Model file /srv/secret/{name}.gguf does not exist. Install: pip install x"

    traces = api.Traces(MODELS, broken, lambda *a, **k: pytest.fail("no pass for a broken model"))
    with pytest.raises(ValueError) as refused:
        api.block_bytes(traces, "smollm2", SENTENCE, 0, "scores")
    assert str(refused.value) == "The smollm2 model is not installed on this server."
