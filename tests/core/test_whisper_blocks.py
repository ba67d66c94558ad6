"""Whisper's cross-attention on the text models' header + block protocol: ``pack.cross_header``
and ``pack.cross_block`` (part "cross", one layer [heads, text tokens, frames] over a span of
20 ms frames) on a real transcription, and the block route (``server.api``, the same path and
guard as the text models' blocks) serving them from a stored clip, 404 for a clip not held."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from attention_core import load_model, log_mel, transcribe
from attention_core.core.pieces import show_piece
from attention_core.methods.pack import AUDIO_PARTS, PARTS, block_nbytes, cross_block, cross_header
from attention_core.models.whisper.audio import load_audio, speech_frames
from explorer import PATH
from explorer.page_token import HEADER, mint
from server import api
from server.trace_store import TraceStore

CLIPS = Path(__file__).resolve().parents[2] / "examples" / "clips"


@pytest.fixture(scope="module")
def heard():
    audio = load_audio(CLIPS / "river.wav")
    model = load_model("whisper")
    return model, transcribe(model, log_mel(audio.samples_n)), speech_frames(audio.samples_n)


def test_a_cross_block_is_a_layer_of_the_rows_that_wrote_the_text_over_the_span(heard):
    model, trace, (lo, hi) = heard
    n_text, n_prompt = len(trace.text_ids), trace.n_prompt
    assert "cross" in AUDIO_PARTS and "cross" not in PARTS  # a text trace has no such part
    for layer in range(model.config.n_layers):
        block = cross_block(trace, layer, (lo, hi))
        got = np.frombuffer(block.data, "<f4").reshape(model.config.n_heads, n_text, hi - lo)
        want = trace.cross_pattern_lhqk[layer, :, n_prompt - 1 : n_prompt - 1 + n_text, lo:hi]
        np.testing.assert_array_equal(got, want)  # the engine's float32, exactly
        assert (block.layer, block.part) == (layer, "cross")
        assert len(block.data) == block_nbytes(n_text, 6, 64, "cross", n_frames=hi - lo)
    with pytest.raises(ValueError, match="layer"):
        cross_block(trace, 4, (lo, hi))
    for bad in ((hi, lo), (0, 1501), (-1, 10)):
        with pytest.raises(ValueError, match="frames"):
            cross_block(trace, 0, bad)


def test_the_cross_header_says_what_the_blocks_hold(heard):
    model, trace, (lo, hi) = heard
    head = cross_header(trace, model.config, (lo, hi))
    text = [show_piece(t) for t in trace.tokens[trace.n_prompt :]]
    assert head["tokens"] == text and head["n_tokens"] == len(trace.text_ids)
    assert (head["n_layers"], head["n_heads"], head["n_frames"], head["first"]) == (
        4,
        6,
        hi - lo,
        lo,
    )
    assert head["causal"] is True and not any(head["special"])
    assert head["kept_hiding_special"] == list(range(len(text)))
    json.dumps(head)  # JSON-ready


def _client(store: TraceStore) -> TestClient:
    def get_clip(model: str, clip: str):
        found = store.peek((model, clip))
        return found  # the stored clip, or None

    traces = api.Traces(
        models=("minilm",),
        model_error=lambda _: None,
        get_trace=lambda *_: pytest.fail("a clip's block computes no text pass"),
        get_clip=get_clip,
        clip_models=("whisper",),
    )
    app = Starlette(routes=api.routes(traces))
    return TestClient(app, headers={HEADER: mint("a-listener")})


def test_the_block_route_serves_a_stored_clips_layers_and_says_when_it_is_gone(heard):
    _, trace, (lo, hi) = heard
    store = TraceStore(2**30)
    store.get(("whisper", "clip-1"), lambda: trace)  # as the Listen page stores a clip
    client = _client(store)
    body = {"model": "whisper", "clip": "clip-1", "layer": 3, "part": "cross", "frames": [lo, hi]}
    answer = client.post(PATH, content=json.dumps(body))
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/octet-stream"
    assert answer.content == cross_block(trace, 3, (lo, hi)).data
    gone = client.post(PATH, content=json.dumps(body | {"clip": "evicted"}))
    assert (gone.status_code, gone.json()) == (404, {"error": api.GONE})
    for bad in (
        {"model": "minilm"},  # not an audio model
        {"clip": ""},
        {"clip": "x" * 129},
        {"layer": "3"},
        {"layer": 4},
        {"frames": [hi, lo]},
        {"frames": [lo]},
        {"frames": [lo, True]},
    ):
        refused = client.post(PATH, content=json.dumps(body | bad))
        assert refused.status_code == 400 and "error" in refused.json(), bad
    no_token = TestClient(client.app).post(PATH, content=json.dumps(body))
    assert no_token.status_code == 403  # the app's own pages only, as for text
