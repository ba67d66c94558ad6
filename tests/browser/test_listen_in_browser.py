"""The Listen page through a real microphone path, in Debian's Chromium against `streamlit run
app.py`: Chromium's fake media device plays a shipped clip into `st.audio_input`, the page is
recorded from for about 5 s, and the transcript drawn is the engine's on what was recorded (and
holds the clip's words); the cross-attention chart is drawn. A screenshot goes to /tmp."""

from __future__ import annotations

from pathlib import Path
from urllib.request import urlopen

import pytest

from attention_core import load_whisper, log_mel, transcribe
from attention_core.models.whisper.audio import load_audio
from scripts.live_app import wait_idle
from tests.browser.conftest import heard_line, own_chromium

pytestmark = pytest.mark.browser

CLIP = Path(__file__).resolve().parents[2] / "examples" / "clips" / "river.wav"
WAIT_MS = 60_000
RECORD_MS = 5_000  # the clip is 3.7 s; the fake device plays it once (%noloop), then silence
SHOT = "/tmp/listen_in_browser.png"  # the recording, transcript and cross-attention
SHOT_TOKEN = "/tmp/listen_token_in_browser.png"  # a token's row over the spectrogram
FAKE_MIC = [
    "--use-fake-ui-for-media-stream",
    "--use-fake-device-for-media-stream",
    f"--use-file-for-fake-audio-capture={CLIP}%noloop",
]


@pytest.fixture
def mic_page(browser):
    """A page in a second Chromium whose microphone plays CLIP."""
    with own_chromium(browser, FAKE_MIC, permissions=["microphone"]) as page:
        yield page


def test_a_recording_from_the_microphone_is_transcribed_and_drawn(app_url, mic_page):
    page = mic_page
    page.goto(f"{app_url}/listen")
    page.wait_for_selector("text=Whisper heard:", timeout=WAIT_MS)  # the default clip
    wait_idle(page, WAIT_MS)
    page.get_by_text("Your microphone").click()
    record = page.get_by_role("button", name="Record")
    record.wait_for(timeout=WAIT_MS)
    record.click()
    page.wait_for_timeout(RECORD_MS)  # how long the recording is, not a wait for the app
    page.get_by_role("button", name="Stop recording").click()
    page.wait_for_selector("text=Whisper heard:", timeout=WAIT_MS)
    wait_idle(page, WAIT_MS)
    page.wait_for_function(
        "document.querySelectorAll('.js-plotly-plot .main-svg').length >= 1", timeout=WAIT_MS
    )
    # the page plays back what it heard (16 kHz WAV): the engine on those bytes
    src = page.locator("audio").first.get_attribute("src")
    assert src
    with urlopen(src if src.startswith("http") else f"{app_url}{src}") as response:
        recorded = load_audio(response.read())
    trace = transcribe(load_whisper(), log_mel(recorded.samples_n))
    heard = heard_line(page)
    assert heard == f"Whisper heard: {trace.text}"
    assert "river bank was muddy" in trace.text.lower()
    title = page.locator(".ax-cross .ax-title").text_content() or ""  # the explorer's view
    assert title.startswith("Layer 3, head 0")
    page.screenshot(path=SHOT)
    page.locator(".js-plotly-plot").nth(1).scroll_into_view_if_needed()
    page.screenshot(path=SHOT_TOKEN)
