"""Audio in, for Whisper: read a file or bytes, make it 16 kHz mono float32, say what was changed.

`load_audio` reads WAV, FLAC, OGG or MP3 with soundfile, mixes channels to mono, resamples with
soxr to 16 kHz and keeps the first 30 s, collecting a plain notice for each change (stereo mixed,
resampled, cut, clipping heard). Input it cannot use raises `AudioError`, whose message a page
can show as is. `speak` makes a clip from typed text with espeak-ng. `speech_frames` finds the
encoder frames (20 ms each) that hold the sound, for trimming views; `is_silent` says when there
is none. `log_mel` (from attention_core.mel) turns the samples into Whisper's input.
Shape suffix: ``n`` samples.
"""

from __future__ import annotations

import io
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import soundfile as sf
import soxr

from attention_core.mel import N_FRAMES, N_SAMPLES, SAMPLE_RATE, log_mel

__all__ = [
    "MAX_BYTES",
    "N_FRAMES",
    "N_SAMPLES",
    "SAMPLE_RATE",
    "Audio",
    "AudioError",
    "is_silent",
    "load_audio",
    "log_mel",
    "speak",
    "speech_frames",
]

F32 = npt.NDArray[np.float32]

MAX_BYTES = 25 * 1024 * 1024  # the largest file accepted: 25 MB
MAX_SECONDS = N_SAMPLES // SAMPLE_RATE  # Whisper hears one 30 s window
FULL_SCALE = 32767 / 32768  # a sample this loud (16-bit full scale) counts as clipped
CLIP_SHARE = 0.001  # say the recording clips when at least 0.1% of its samples do
ENCODER_HOP = N_SAMPLES // 1500  # 320 samples: one encoder frame is 20 ms
SILENCE_DB = -60.0  # a 20 ms frame quieter than this (RMS, dB full scale) holds no sound
SPEECH_RANGE_DB = 35.0  # frames this far below the loudest frame are not counted as speech
MAX_SPEAK_CHARS = 300  # about 20 s of speech at espeak-ng's default speed
ESPEAK_INSTALL = "sudo apt-get install espeak-ng"


class AudioError(ValueError):
    """Audio that cannot be used; the message says why in plain words and what to do."""


@dataclass(frozen=True)
class Audio:
    """Mono 16 kHz samples in [-1, 1], at most 30 s, and what was done to get them."""

    samples_n: F32  # [n] float32
    seconds: float  # the length kept (after cutting to 30 s)
    source_rate: int  # the file's own sample rate, in Hz
    notices: tuple[str, ...]  # plain sentences about each change made


def _read_bytes(source: str | Path | bytes, max_bytes: int) -> bytes:
    """The file's bytes, refused when missing, empty or over max_bytes."""
    if isinstance(source, bytes):
        data = source
    else:
        path = Path(source)
        if not path.is_file():
            raise AudioError(f"No audio file at {path}. Check the path and try again.")
        if path.stat().st_size > max_bytes:  # refused before reading it
            raise AudioError(_too_big(path.stat().st_size, max_bytes))
        data = path.read_bytes()
    if not data:
        raise AudioError("The file is empty (0 bytes). Record or upload a clip with sound in it.")
    if len(data) > max_bytes:
        raise AudioError(_too_big(len(data), max_bytes))
    return data


def _too_big(size: int, max_bytes: int) -> str:
    """The message for a file over the size limit."""
    return (
        f"The file is {size / 1e6:.1f} MB; the limit is {max_bytes / 1e6:.0f} MB. "
        f"Upload a shorter clip (Whisper hears only the first {MAX_SECONDS} s anyway)."
    )


def _decode(data: bytes) -> tuple[npt.NDArray[np.float32], int, float]:
    """The first 30 s as float32 [n, channels], the sample rate, and the whole file's seconds."""
    try:
        with sf.SoundFile(io.BytesIO(data)) as f:
            rate = int(f.samplerate)
            total_s = f.frames / rate if rate > 0 else 0.0
            frames = f.read(frames=MAX_SECONDS * rate, dtype="float32", always_2d=True)
    except (sf.SoundFileError, RuntimeError, TypeError, ValueError) as error:
        raise AudioError(
            "This file could not be read as audio (it may be damaged, or in a format other "
            f"than WAV, FLAC, OGG or MP3): {error}. Try another file."
        ) from None
    if frames.shape[0] == 0 or rate <= 0:
        raise AudioError("The recording is empty (0 seconds). Record or upload a longer clip.")
    return np.asarray(frames, dtype=np.float32), rate, total_s


def _clipping_notice(frames: npt.NDArray[np.float32]) -> str | None:
    """A notice when at least CLIP_SHARE of the samples sit at (or past) full scale."""
    share = float(np.mean(np.abs(frames) >= FULL_SCALE))
    if share < CLIP_SHARE:
        return None
    return f"The recording clips ({100 * share:.1f}% of samples at full scale)."


def load_audio(source: str | Path | bytes, max_bytes: int = MAX_BYTES) -> Audio:
    """Read a WAV, FLAC, OGG or MP3 file (a path or its bytes) into Whisper's 16 kHz mono input.

    Raises AudioError for a missing, empty, 0-second, unreadable or too large file (over
    max_bytes) and for samples that are not numbers (NaN or infinite). Silence is accepted.
    """
    frames, rate, total_s = _decode(_read_bytes(source, max_bytes))
    if not np.all(np.isfinite(frames)):
        raise AudioError(
            "The recording holds samples that are not numbers (NaN or infinite), so it cannot "
            "be heard. Export it again or use another file."
        )
    notices = []
    if total_s > MAX_SECONDS + 0.05:
        notices.append(f"Only the first {MAX_SECONDS} s are used (the clip is {total_s:.1f} s).")
    if frames.shape[1] > 1:
        what = "Stereo" if frames.shape[1] == 2 else f"{frames.shape[1]} channels"
        notices.append(f"{what} mixed to mono.")
    clipping = _clipping_notice(frames)
    samples = frames.mean(axis=1, dtype=np.float32)
    if rate != SAMPLE_RATE:
        samples = np.asarray(soxr.resample(samples, rate, SAMPLE_RATE), dtype=np.float32)
        notices.append(f"Resampled from {rate} Hz.")
    if clipping:
        notices.append(clipping)
    samples = np.clip(samples[:N_SAMPLES], -1.0, 1.0).astype(np.float32)
    return Audio(samples, samples.size / SAMPLE_RATE, rate, tuple(notices))


def frame_db(samples_n: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Loudness of each 20 ms encoder frame (RMS in dB full scale), for the first 30 s."""
    samples = np.asarray(samples_n, dtype=np.float64).reshape(-1)[:N_SAMPLES]
    n_frames = -(-samples.size // ENCODER_HOP)
    padded = np.zeros(n_frames * ENCODER_HOP)
    padded[: samples.size] = samples
    rms = np.sqrt(np.mean(padded.reshape(n_frames, ENCODER_HOP) ** 2, axis=1))
    return 20.0 * np.log10(np.maximum(rms, 1e-10))


def is_silent(samples_n: npt.ArrayLike) -> bool:
    """True when no 20 ms frame is louder than SILENCE_DB (-60 dB full scale), or there is none.

    Whisper has nothing to hear in such input and guesses (tiny.en hears " you" in 2 s of
    digital silence), so a page should say that the recording is silent.
    """
    db = frame_db(samples_n)
    return db.size == 0 or float(db.max()) < SILENCE_DB


def speech_frames(samples_n: npt.ArrayLike, margin: int = 2) -> tuple[int, int]:
    """The encoder frames that hold the sound: (first, last) as a half-open range in 0..1500.

    A 20 ms frame counts when it is louder than both SILENCE_DB and SPEECH_RANGE_DB below the
    loudest frame; the range runs from the first such frame to just after the last, widened by
    `margin` frames on each side (within the clip). Silent input gives the whole clip's frames.
    """
    db = frame_db(samples_n)
    if db.size == 0:
        return 0, 0
    loud = np.flatnonzero(db > max(SILENCE_DB, float(db.max()) - SPEECH_RANGE_DB))
    if loud.size == 0:
        return 0, int(db.size)
    return max(int(loud[0]) - margin, 0), min(int(loud[-1]) + 1 + margin, int(db.size))


def speak(text: str, speed: int = 150, voice: str = "en-us") -> Audio:
    """The text spoken by espeak-ng, as Audio (16 kHz mono), via a subprocess with a timeout.

    Raises AudioError when the text is empty or longer than MAX_SPEAK_CHARS characters, when
    espeak-ng is not installed (naming the command that installs it) or when it fails.
    """
    text = " ".join(text.split())
    if not text:
        raise AudioError("Type a sentence for espeak-ng to speak.")
    if len(text) > MAX_SPEAK_CHARS:
        raise AudioError(
            f"The text is {len(text)} characters; espeak-ng speaks at most {MAX_SPEAK_CHARS} here "
            "(about 20 s). Type a shorter sentence."
        )
    exe = shutil.which("espeak-ng")
    if exe is None:
        raise AudioError(
            "espeak-ng is not installed, so typed text cannot be spoken. Install it with "
            f"`{ESPEAK_INSTALL}`, or record or upload a clip instead."
        )
    command = [exe, "-v", voice, "-s", str(int(speed)), "--stdout"]
    try:
        done = subprocess.run(
            command, input=text.encode("utf-8"), capture_output=True, timeout=30, check=True
        )
    except (subprocess.SubprocessError, OSError) as error:
        raise AudioError(
            f"espeak-ng could not speak the text ({error}). Try other words."
        ) from None
    return load_audio(done.stdout)
