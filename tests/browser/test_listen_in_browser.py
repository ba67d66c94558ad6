"""The Listen page through a real microphone path, in Debian's Chromium against `streamlit run
app.py`: Chromium's fake media device plays a shipped clip into `st.audio_input`, the page is
recorded from for about 5 s, and the transcript drawn is the engine's on what was recorded (and
holds the clip's words); the cross-attention chart is drawn. A screenshot goes to /tmp."""

from __future__ import annotations

from pathlib import Path
from urllib.request import urlopen

import pytest

from attention_core import load_whisper, log_mel, transcribe
from attention_core.methods.word_timing import word_timing
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
    # the fake microphone's clip was heard (Whisper writes "river bank" or "riverbank" as the
    # recording's start moves by a few ms: spaces are not what this checks)
    assert "riverbankwasmuddy" in trace.text.lower().replace(" ", "")
    title = page.locator(".ax-cross .ax-title").text_content() or ""  # the explorer's view
    assert title.startswith("Layer 3, head 0")
    page.screenshot(path=SHOT)
    page.locator(".js-plotly-plot").nth(1).scroll_into_view_if_needed()
    page.screenshot(path=SHOT_TOKEN)


SHOT_WORDS = "/tmp/listen_words_in_browser.png"  # the words in time, one word played


def test_a_words_time_on_the_page_is_the_engines_and_its_click_plays_it(app_url, page):
    """The words-in-time strip of the animal clip: every bar's start and end (Plotly's own data
    in the page) and the times a clicked word's caption reads are the engine's; the clicked
    word's stretch is what the page's new audio player holds (its length, to the sample)."""
    clip = CLIP.parent / "animal.wav"
    audio = load_audio(clip)
    trace = transcribe(load_whisper(), log_mel(audio.samples_n))
    timing = word_timing(trace, len(audio.samples_n))
    page.goto(f"{app_url}/listen?lis_clip=animal")
    page.wait_for_selector("text=Whisper heard:", timeout=WAIT_MS)
    wait_idle(page, WAIT_MS)
    assert heard_line(page) == f"Whisper heard: {trace.text}"
    page.get_by_text("Words in time.").scroll_into_view_if_needed()  # charts draw when seen
    bars = page.evaluate(
        """() => new Promise((done) => {
            const find = () => [...document.querySelectorAll('.js-plotly-plot')]
                .map((el) => el._fullData && el._fullData[0])
                .find((d) => d && d.type === 'bar' && d.orientation === 'h');
            const wait = () => {
                const d = find();
                if (!d) return setTimeout(wait, 100);
                done({ text: Array.from(d.text), base: Array.from(d.base), x: Array.from(d.x) });
            };
            wait();
        })"""
    )
    assert bars["text"] == [w.strip() for w in timing.words]
    assert bars["base"] == pytest.approx(list(timing.word_starts), abs=1e-9)
    ends = [b + x for b, x in zip(bars["base"], bars["x"], strict=True)]
    assert ends == pytest.approx(list(timing.word_ends), abs=1e-9)
    word = 3  # " cross"
    start, end = round(timing.word_starts[word], 2), round(timing.word_ends[word], 2)
    page.locator("button", has_text=f"cross ({start:.2f} s)").click()
    said = page.get_by_text("was heard from")
    said.wait_for(timeout=WAIT_MS)
    wait_idle(page, WAIT_MS)
    assert said.inner_text() == f"“cross” was heard from {start:.2f} s to {end:.2f} s."
    player = page.locator("audio[autoplay]")
    assert player.count() == 1
    page.wait_for_function(
        "() => document.querySelector('audio[autoplay]').readyState >= 1", timeout=WAIT_MS
    )
    duration = player.evaluate("(el) => el.duration")
    assert duration == pytest.approx(end - start, abs=1 / 16000)
    page.locator("text=Words in time").scroll_into_view_if_needed()
    page.screenshot(path=SHOT_WORDS)
