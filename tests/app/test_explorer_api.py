"""The explorer's HTTP route, POST /api/attention/block, through Starlette's TestClient.

A good request answers with the engine's raw float32 bytes exactly; a bad one with 400 and a
plain reason, after which the route still answers; the sentence is data, never markup."""

from __future__ import annotations

import html
import json

import numpy as np
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

import ui.routes
from attention_core import trace_sentence
from attention_core.pack import layer_block
from explorer import PATH
from server import api
from ui.params import MAX_CHARS

MODEL = "minilm"
SENTENCE = "The river bank was muddy"
PAYLOAD = "<img src=x onerror=alert(1)> <b>bold</b> <script>alert(2)</script> \"'&"


@pytest.fixture(scope="module")
def client():
    with TestClient(Starlette(routes=ui.routes.ROUTES)) as client:
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
    ("body too large", good(text="x" * (ui.routes.TRACES.max_body + 1)), "request too large"),
]


@pytest.mark.parametrize(("body", "message"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_request_is_400_with_a_plain_reason(client, trace, body, message):
    response = post(client, body)
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("text/plain")
    assert message in response.text
    assert "Traceback" not in response.text and "<" not in response.text
    assert len(response.text) < 200
    # and the route keeps answering
    after = post(client, good(layer=0))
    assert after.status_code == 200
    assert after.content == layer_block(trace, 0, "scores").data


def test_text_of_exactly_max_chars_is_accepted(client, model):
    text = ("the bank " * MAX_CHARS)[:MAX_CHARS]
    response = post(client, good(text=text, layer=5, part="qk"))
    assert response.status_code == 200, response.text
    # cut at 512 tokens by the engine: [h, 512, 32] queries then keys
    assert len(response.content) == 2 * 4 * 12 * 512 * 32


def test_only_post_is_routed(client):
    assert client.get(PATH).status_code == 405


def test_parse_request_returns_the_fields():
    body = json.dumps(good(text=PAYLOAD, layer=4, part="qk")).encode()
    assert api.parse_request(ui.routes.TRACES, body) == (MODEL, PAYLOAD, 4, "qk")
