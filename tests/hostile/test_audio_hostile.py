"""Hostile audio. In process (fast tier): WAV headers written by hand, every field a visitor
controls (format tag, channels, rate, byte rate, block align, bits, the data chunk's claimed
length, the bytes really sent). `load_audio` either returns audio within the decode budget or
raises AudioError with a plain message; never another exception, never past the budget.
Live (marked hostile and browser): a decode bomb and a file in another format uploaded on the
Listen page in Chromium get their message, and a normal visitor is served after them.
"""

from __future__ import annotations

import io
import struct
import tracemalloc

import numpy as np
import pytest
import soundfile as sf
from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from attention_core.models.whisper.audio import (
    DECODE_BUDGET,
    MAX_RATE,
    MIN_RATE,
    N_SAMPLES,
    Audio,
    AudioError,
    load_audio,
)
from scripts.live_app import wait_idle
from tests.hostile.conftest import NORMAL_VISITOR_S, normal_visitor

U16 = st.integers(0, 2**16 - 1)
U32 = st.integers(0, 2**32 - 1)
# (format tag, bits) that libsndfile reads: PCM 8 to 32 bits, float 32 and 64, A-law, mu-law
KINDS = [(1, 8), (1, 12), (1, 16), (1, 24), (1, 32), (3, 32), (3, 64), (6, 8), (7, 8)]
RATES = [1, 999, 8_000, 16_000, 44_100, 48_000, 192_000, 192_001, 655_350, 2**32 - 1]


def wav(
    tag: int, channels: int, rate: int, bits: int, claimed: int, body: bytes, align: int | None
) -> bytes:
    """A RIFF/WAVE file with the header fields as given (consistent or not) and ``body`` as its
    data chunk, whose header claims ``claimed`` bytes."""
    block = align if align is not None else (channels * bits // 8) % 2**16
    fmt = struct.pack("<HHIIHH", tag, channels, rate, (rate * block) % 2**32, block, bits)
    chunks = b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", claimed)
    return (
        b"RIFF" + struct.pack("<I", (4 + len(chunks) + len(body)) % 2**32) + b"WAVE" + chunks + body
    )


def load_traced(data: bytes) -> tuple[Audio | AudioError, int]:
    """load_audio's answer (the audio or its AudioError) and the peak of the allocations made."""
    tracemalloc.start()
    try:
        return load_audio(data), tracemalloc.get_traced_memory()[1]
    except AudioError as error:  # anything else fails the test
        return error, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def assert_bounded(data: bytes) -> Audio | AudioError:
    """The answer is audio within the budget, or a plain AudioError."""
    answer, peak = load_traced(data)
    assert peak <= DECODE_BUDGET, peak
    if isinstance(answer, AudioError):
        message = str(answer)
        assert message and "/" not in message and "Error" not in message, message
        return answer
    samples = answer.samples_n
    assert samples.dtype == np.float32 and 0 < samples.size <= N_SAMPLES
    assert np.all(np.isfinite(samples)) and np.abs(samples).max() <= 1.0
    assert MIN_RATE <= answer.source_rate <= MAX_RATE
    return answer


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    tag=U16,
    channels=U16,
    rate=U32,
    bits=U16,
    claimed=U32,
    body=st.binary(max_size=4096),
    align=st.none() | U16,
)
def test_any_wav_header_is_read_within_the_budget_or_refused(
    tag, channels, rate, bits, claimed, body, align
):
    answer = assert_bounded(wav(tag, channels, rate, bits, claimed, body, align))
    event("read" if isinstance(answer, Audio) else str(answer).split(";")[0].split(" (")[0])


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    kind=st.sampled_from(KINDS),
    channels=st.sampled_from([1, 2, 1, 2, 1, 2, 3, 8, 255, 2**16 - 1]),
    rate=st.sampled_from(RATES) | st.integers(MIN_RATE, MAX_RATE),
    claimed=st.sampled_from([0, 2**31 - 1, 2**32 - 1]) | U32,
    body=st.binary(max_size=4096),
    zeros=st.sampled_from([0, 2**16, 2**20, 3_000_000]) | st.integers(0, 3_000_000),
)
@example(kind=(1, 16), channels=8, rate=655_350, claimed=2**32 - 1, body=b"", zeros=2**20)
@example(kind=(3, 32), channels=2, rate=192_000, claimed=2**32 - 1, body=b"", zeros=3_000_000)
def test_plausible_wav_headers_are_read_within_the_budget_or_refused(
    kind, channels, rate, claimed, body, zeros
):
    tag, bits = kind
    answer = assert_bounded(wav(tag, channels, rate, bits, claimed, body + bytes(zeros), None))
    event("read" if isinstance(answer, Audio) else str(answer).split(";")[0].split(" (")[0])


def test_a_patched_header_claiming_8_channels_at_655_khz_is_refused():
    data = wav(1, 8, 655_350, 16, 8 * 2 * 655_350 * 30, bytes(2**20), None)
    answer = assert_bounded(data)
    assert isinstance(answer, AudioError)
    assert "8 channels; at most 2" in str(answer) and "46 MB" in str(answer)


@pytest.mark.parametrize(("channels", "rate"), [(1, 16_000), (2, 48_000), (2, 192_000)])
def test_a_header_claiming_more_than_is_sent_reads_what_is_there(channels, rate):
    answer = assert_bounded(wav(1, channels, rate, 16, 2**32 - 1, bytes(channels * rate), None))
    assert isinstance(answer, Audio) and answer.seconds == pytest.approx(
        0.5, abs=0.01
    )  # 16-bit: 0.5 s


def _flac_bomb() -> bytes:
    """30 s of silence, 8 channels at 655,350 Hz: 170 KB of FLAC, 629 MB of float32 decoded."""
    out = io.BytesIO()
    second = np.zeros((655_350, 8), dtype=np.int16)
    with sf.SoundFile(out, "w", 655_350, 8, format="FLAC", subtype="PCM_16") as f:
        for _ in range(30):
            f.write(second)
    return out.getvalue()


def _aiff() -> bytes:
    out = io.BytesIO()
    sf.write(out, np.zeros(16_000, dtype=np.float32), 16_000, format="AIFF")
    return out.getvalue()


@pytest.mark.hostile
@pytest.mark.browser
def test_a_decode_bomb_and_another_format_uploaded_on_the_page(browser, hostile_url):
    wait_ms = NORMAL_VISITOR_S * 1000
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.goto(f"{hostile_url}/listen")
        page.wait_for_selector("text=Whisper heard:", timeout=3 * wait_ms)  # Whisper loads
        wait_idle(page, wait_ms)
        page.get_by_text("Upload a file").click()
        uploads = [
            ("bomb.flac", "audio/flac", _flac_bomb(), "at most 2 (stereo) are read"),
            ("river.wav", "audio/wav", _aiff(), "is not WAV, FLAC, OGG (Vorbis or Opus) or MP3"),
        ]
        for name, mime, data, said in uploads:
            main = '[data-testid="stMainBlockContainer"] [data-testid="stFileUploader"]'
            chooser = page.locator(f'{main} input[type="file"]')  # not the sidebar's .txt one
            chooser.set_input_files({"name": name, "mimeType": mime, "buffer": data})
            alert = page.get_by_test_id("stAlert").filter(has_text=said)
            alert.wait_for(timeout=wait_ms)
            assert page.get_by_test_id("stException").count() == 0
    finally:
        context.close()
    normal_visitor(browser, hostile_url)  # and the replica's peak stays within 1.5 GB
