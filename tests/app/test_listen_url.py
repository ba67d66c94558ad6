"""The Listen page's example clip lives in the URL (lis_clip): a link opens its clip, the
transcript is the engine's on that clip, and a name that is not a shipped clip is refused with a
warning (the first clip opens)."""

from __future__ import annotations

import pytest

from attention_core import load_whisper, log_mel, transcribe
from attention_core.models.whisper.audio import load_audio
from tests.app.conftest import open_page, url_param
from ui import safe
from ui.presets import CLIPS, clip_names


def test_a_link_opens_its_clip_and_the_url_follows_the_choice():
    at = open_page("listen", lis_clip="river")
    assert not at.exception and not at.error
    assert at.selectbox(key="lis_clip").value == "river"
    heard = transcribe(load_whisper(), log_mel(load_audio(CLIPS / "river.wav").samples_n))
    assert f"**Whisper heard:** {safe.md(heard.text)}" in [m.value for m in at.markdown]
    assert url_param(at, "lis_clip") == "river"
    at.selectbox(key="lis_clip").set_value("fluffy").run()
    assert url_param(at, "lis_clip") == "fluffy"


@pytest.mark.parametrize("raw", ["nope", "../river", ""])
def test_a_clip_that_is_not_shipped_is_refused_with_a_warning(raw):
    at = open_page("listen", lis_clip=raw)
    assert not at.exception
    assert any(w.value.startswith("Ignored URL parameter lis") for w in at.warning)
    assert at.selectbox(key="lis_clip").value == clip_names()[0]
