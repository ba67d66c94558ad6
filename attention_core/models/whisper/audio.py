"""Audio in, for Whisper: read a file or bytes, make it 16 kHz mono float32, say what was changed.

`load_audio` accepts WAV, FLAC, OGG (Vorbis, Opus) or MP3, told by content: soundfile opens the
bytes and its header is checked before any sample is decoded (format, at most 2 channels, a rate
up to 192 kHz: the first 30 s then decode to at most DECODE_BUDGET, 46 MB, however small the
file). The first 30 s are read in blocks, mixed to mono as they come, resampled with soxr to
16 kHz, collecting a plain notice for each change (stereo mixed, resampled, cut, clipping
heard). Input it cannot use raises `AudioError`, whose message a page can show as is (no paths,
no library internals). `speak` makes a clip from typed text with espeak-ng. `speech_frames`
finds the encoder frames (20 ms each) that hold the sound, for trimming views; `is_silent` says
when there is none. `log_mel` (from attention_core.models.whisper.mel) turns the samples into
Whisper's input. Shape suffix: ``n`` samples.
"""

from __future__ import annotations

import io
import math
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import soundfile as sf
import soxr

from attention_core.models.whisper.mel import N_FRAMES, N_SAMPLES, SAMPLE_RATE, log_mel

__all__ = [
    "ACCEPTED",
    "DECODE_BUDGET",
    "MAX_BYTES",
    "MAX_CHANNELS",
    "MAX_RATE",
    "MB",
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

MB = 1024 * 1024  # a megabyte as Streamlit's server.maxUploadSize counts it
MAX_BYTES = 25 * MB  # the largest file accepted: 25 MB (.streamlit/config.toml says the same)
MAX_SECONDS = N_SAMPLES // SAMPLE_RATE  # Whisper hears one 30 s window
# The decode budget, checked on the header before any sample is decoded: at most 2 channels at
# 192 kHz for 30 s of float32 (2 x 192,000 x 30 x 4 B = 46 MB), a bound on what a small
# compressed file decodes to (170 KB of FLAC silence: 8 channels at 655,350 Hz, 629 MB in 30 s).
MAX_CHANNELS = 2
MAX_RATE = 192_000
MIN_RATE = 1_000  # below this there is no speech to hear, and soxr's ratio would be extreme
DECODE_BUDGET = MAX_CHANNELS * MAX_RATE * MAX_SECONDS * 4
BUDGET_TEXT = (
    f"{DECODE_BUDGET // 10**6} MB ({MAX_CHANNELS} channels x {MAX_RATE:,} Hz x {MAX_SECONDS} s "
    "x 4 bytes)"
)
BLOCK_FRAMES = 65_536  # decoded at a time (1 MB at 2 channels): the whole file never is
# Accepted by content (libsndfile's format and subtype once opened), not by the file's name:
# libsndfile reads two dozen formats, and each is code a visitor's bytes could reach.
_PCM = frozenset({"PCM_U8", "PCM_S8", "PCM_16", "PCM_24", "PCM_32", "FLOAT", "DOUBLE"})
FORMATS: dict[str, frozenset[str]] = {
    "WAV": _PCM | {"ULAW", "ALAW"},
    "WAVEX": _PCM | {"ULAW", "ALAW"},  # WAV's extensible header (multichannel, 24-bit exports)
    "FLAC": _PCM,
    "OGG": frozenset({"VORBIS", "OPUS"}),
    "MP3": frozenset({"MPEG_LAYER_III"}),
}
ACCEPTED = "WAV, FLAC, OGG (Vorbis or Opus) or MP3"
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
            raise AudioError(f"No audio file named {path.name!r} there. Check the path.")
        if path.stat().st_size > max_bytes:  # refused before reading it
            raise AudioError(_too_big(path.stat().st_size, max_bytes))
        data = path.read_bytes()
    if not data:
        raise AudioError("The file is empty (0 bytes). Record or upload a clip with sound in it.")
    if len(data) > max_bytes:
        raise AudioError(_too_big(len(data), max_bytes))
    return data


def _too_big(size: int, max_bytes: int) -> str:
    """The message for a file over the size limit (MB as the uploader counts them: 2**20 B)."""
    return (
        f"The file is {math.ceil(10 * size / MB) / 10:.1f} MB; the limit is {max_bytes // MB} MB. "
        f"Upload a shorter clip (Whisper hears only the first {MAX_SECONDS} s anyway)."
    )


def _unreadable() -> AudioError:
    """The error for bytes that are not audio, or audio damaged past reading."""
    return AudioError(
        f"This file could not be read as audio (it may be damaged, or not {ACCEPTED}). "
        "Try another file."
    )


def _check_header(f: sf.SoundFile) -> None:
    """Refuse, from the header alone, a format not accepted or audio past the decode budget."""
    if f.subtype not in FORMATS.get(f.format, ()):
        raise AudioError(
            f"This file is not {ACCEPTED} (its content says otherwise, whatever its name). "
            "Export it as one of those and try again."
        )
    budget = f"decoding stays within {BUDGET_TEXT}"
    if f.channels > MAX_CHANNELS:
        raise AudioError(
            f"The file has {f.channels} channels; at most {MAX_CHANNELS} (stereo) are read, so "
            f"that {budget}. Export it as mono or stereo and try again."
        )
    if not MIN_RATE <= f.samplerate <= MAX_RATE:
        raise AudioError(
            f"The file's sample rate is {f.samplerate:,} Hz; rates from {MIN_RATE:,} to "
            f"{MAX_RATE:,} Hz are read, so that {budget}. Export it at 16,000 or 48,000 Hz."
        )


def _read_mono(f: sf.SoundFile) -> tuple[F32, float]:
    """The first 30 s mixed to mono, read in blocks; and the share of samples at full scale.

    Raises AudioError on a sample that is not a number, before reading further."""
    n = min(max(f.frames, 0), MAX_SECONDS * f.samplerate)
    mono = np.empty(n, dtype=np.float32)
    block = np.empty((min(BLOCK_FRAMES, max(n, 1)), f.channels), dtype=np.float32)
    done = loud = 0
    while done < n:
        got = f.read(frames=min(block.shape[0], n - done), dtype="float32", out=block)
        if got.shape[0] == 0:
            break
        if not np.all(np.isfinite(got)):
            raise AudioError(
                "The recording holds samples that are not numbers (NaN or infinite), so it "
                "cannot be heard. Export it again or use another file."
            )
        loud += int(np.count_nonzero(np.abs(got) >= FULL_SCALE))
        mono[done : done + got.shape[0]] = got.mean(axis=1, dtype=np.float32)
        done += got.shape[0]
    return mono[:done], loud / max(done * f.channels, 1)


def _decode(data: bytes) -> tuple[F32, int, float, int, float]:
    """The first 30 s in mono, the sample rate, the whole file's seconds, its channels and the
    share of its samples at full scale; refused from the header when past the budget."""
    try:
        with sf.SoundFile(io.BytesIO(data)) as f:
            _check_header(f)
            rate, channels = int(f.samplerate), int(f.channels)
            mono, loud = _read_mono(f)
            total_s = f.frames / rate
    except AudioError:
        raise
    except (sf.SoundFileError, RuntimeError, TypeError, ValueError):  # libsndfile's own words
        raise _unreadable() from None  # would name its internals, so they are not shown
    return mono, rate, total_s, channels, loud


def load_audio(source: str | Path | bytes, max_bytes: int = MAX_BYTES) -> Audio:
    """Read a WAV, FLAC, OGG (Vorbis, Opus) or MP3 file (a path or its bytes) into Whisper's
    16 kHz mono input, decoding at most DECODE_BUDGET bytes of samples.

    Raises AudioError for a missing, empty, 0-second, unreadable or too large file (over
    max_bytes), for another format (told by content, not name), for more than MAX_CHANNELS
    channels or a sample rate outside MIN_RATE..MAX_RATE (told by the header, before decoding),
    and for samples that are not numbers (NaN or infinite). Silence is accepted.
    """
    mono, rate, total_s, channels, loud = _decode(_read_bytes(source, max_bytes))
    notices = []
    if total_s > MAX_SECONDS + 0.05:
        notices.append(f"Only the first {MAX_SECONDS} s are used (the clip is {total_s:.1f} s).")
    if channels > 1:
        notices.append("Stereo mixed to mono.")
    if rate != SAMPLE_RATE:
        mono = np.asarray(soxr.resample(mono, rate, SAMPLE_RATE), dtype=np.float32)
        notices.append(f"Resampled from {rate} Hz.")
    if loud >= CLIP_SHARE:
        notices.append(f"The recording clips ({100 * loud:.1f}% of samples at full scale).")
    samples = np.clip(mono[:N_SAMPLES], -1.0, 1.0).astype(np.float32)
    if samples.size == 0:  # no frame, or fewer than one left after resampling
        raise AudioError("The recording is empty (0 seconds). Record or upload a longer clip.")
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
