"""The Listen page when the microphone is refused, in Debian's Chromium against `streamlit run
app.py`: Chromium has a (fake) microphone but no permission for it (no fake-UI flag, no granted
permission, prompts denied), so getUserMedia fails with NotAllowedError as it does when a visitor
says no. Pressing Record then shows Streamlit's own "would like to use your microphone" notice
and the page's help line (what to do when it was refused), no Python exception, and the page
still works: an example clip is transcribed as the engine transcribes it. A screenshot goes to
/tmp."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from attention_core import load_whisper, log_mel, transcribe
from attention_core.models.whisper.audio import load_audio
from scripts.live_app import wait_idle
from tests.browser.conftest import heard_line, own_chromium
from ui.listen.source import MIC_HELP
from ui.presets import CLIPS, clip_names

pytestmark = pytest.mark.browser

WAIT_MS = 60_000
SHOT = "/tmp/listen_mic_refused.png"
# A microphone exists (so the refusal is a permission's, not a missing device's), and every
# permission prompt is answered no. Without --use-fake-ui-for-media-stream nothing grants it.
REFUSING = ["--use-fake-device-for-media-stream", "--deny-permission-prompts"]
ASKS = "This app would like to use your microphone"  # st.audio_input on NotAllowedError
GET_MIC = """() => navigator.mediaDevices.getUserMedia({ audio: true })
  .then((stream) => { stream.getTracks().forEach((t) => t.stop()); return 'granted'; },
        (err) => err.name)"""


@pytest.fixture
def refused_page(browser):
    """A page in a second Chromium that refuses the microphone."""
    with own_chromium(browser, REFUSING) as page:  # no permission granted
        yield page


def test_a_refused_microphone_is_explained_and_the_page_keeps_working(app_url, refused_page):
    page = refused_page
    page.goto(f"{app_url}/listen")
    page.wait_for_selector("text=Whisper heard:", timeout=WAIT_MS)  # the default clip
    wait_idle(page, WAIT_MS)
    assert page.evaluate(GET_MIC) == "NotAllowedError"  # refused, as a visitor's "Block"
    page.get_by_text("Your microphone").click()
    record = page.get_by_role("button", name="Record")
    record.wait_for(timeout=WAIT_MS)
    record.click()
    recorder = page.get_by_test_id("stAudioInput")
    recorder.get_by_text(ASKS).wait_for(timeout=WAIT_MS)
    # it did not start recording, and the page says what to do about a refusal
    assert page.get_by_role("button", name="Stop recording").count() == 0
    expect(page.get_by_test_id("stAlert").filter(has_text=MIC_HELP)).to_have_count(1)
    assert "refused" in MIC_HELP and "upload a file" in MIC_HELP  # what to do about it
    assert page.get_by_test_id("stException").count() == 0  # no Python traceback
    assert page.locator("text=Whisper heard:").count() == 0  # nothing was transcribed
    page.screenshot(path=SHOT)
    # the page still works: an example clip, transcribed as the engine transcribes it
    page.get_by_text("An example clip").click()
    page.wait_for_selector("text=Whisper heard:", timeout=WAIT_MS)
    wait_idle(page, WAIT_MS)
    clip = load_audio(CLIPS / f"{clip_names()[0]}.wav")
    trace = transcribe(load_whisper(), log_mel(clip.samples_n))
    assert heard_line(page) == f"Whisper heard: {trace.text}"
    assert page.get_by_test_id("stException").count() == 0
    assert page.errors == []
