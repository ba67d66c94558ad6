"""A replica's Listen warm (``ui.listen.warm``): after ``warm()`` the Listen page on every
shipped example clip transcribes nothing (this process's count of Whisper passes stays put), even
after the trace store has been emptied to make room (a class's traces and uploaded clips do that);
the browser's layer requests find the clip; the encoder's view waits until its section is opened;
a second ``warm()`` computes nothing and reserves nothing more."""

from __future__ import annotations

import json

import pytest

from attention_core import load_whisper, log_mel, transcribe
from attention_core.models.whisper.audio import load_audio
from server import api
from server.budget import nbytes
from tests.app.conftest import open_page
from ui import safe
from ui.cache import trace_store, whisper_error
from ui.listen import cache
from ui.listen.views import ENCODER_OPEN
from ui.listen.warm import warm
from ui.presets import CLIPS, clip_names
from ui.routes import TRACES


@pytest.fixture(scope="module")
def warmed():
    """``warm()`` run once; the kept clips dropped and their bytes given back after."""
    if whisper_error():
        pytest.skip("Whisper is not installed")
    warm()
    yield
    cache.forget_kept()


def _blocks(at) -> int:
    """The layers the browser fetches for the page's clip, as the block route answers them."""
    [element] = [c for c in at.get("bidi_component") if c.proto.id.endswith("-lis_cross")]
    data = json.loads(element.proto.json)
    got = 0
    for layer in range(data["header"]["n_layers"]):
        body = {"model": "whisper", "clip": data["clip"], "layer": layer, "part": "cross"}
        got += (
            api.clip_block(TRACES, json.dumps(body | {"frames": data["frames"]}).encode())
            is not None
        )
    return got


@pytest.mark.parametrize("name", clip_names())
def test_after_warm_an_example_clip_is_not_heard_again(warmed, name):
    store = trace_store()
    assert store.reserve(store.total - store.other)  # everything in the store pushed out
    store.give_back(store.total - store.other)
    before = cache.passes()
    at = open_page("listen", lis_clip=name)
    assert not at.exception and not at.error
    heard = transcribe(load_whisper(), log_mel(load_audio(CLIPS / f"{name}.wav").samples_n))
    assert f"**Whisper heard:** {safe.md(heard.text)}" in [m.value for m in at.markdown]
    assert _blocks(at) == 4  # every layer answered from the kept clip
    assert not [c for c in at.get("plotly_chart") if c.proto.id.endswith("-lis_encoder")]
    assert cache.passes() == before  # nothing transcribed: the page found the clip warm
    at.session_state[ENCODER_OPEN] = True  # opened: the encoder's view is drawn
    at.run()
    assert not at.exception
    assert [c for c in at.get("plotly_chart") if c.proto.id.endswith("-lis_encoder")]
    assert cache.passes() == before


def test_a_second_warm_computes_and_reserves_nothing(warmed):
    store, before = trace_store(), cache.passes()
    other = store.other
    kept = sum(nbytes(clip) for clip in cache._kept.values())
    assert len(cache._kept) == len(clip_names()) and other >= kept > 0
    warm()
    assert cache.passes() == before and store.other == other
