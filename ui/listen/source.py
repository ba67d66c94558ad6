"""The Listen page's input: an example clip, the microphone, an uploaded file or typed text
spoken by espeak-ng, read into 16 kHz mono samples by attention_core.models.whisper.audio, once per
clip (ui.listen.decode). Every problem with the audio becomes a message on the page; the page stops
there and keeps working."""

from __future__ import annotations

import io
import shutil

import numpy as np
import soundfile as sf
import streamlit as st
from numpy.typing import NDArray

from attention_core.models.whisper.audio import (
    ACCEPTED,
    ESPEAK_INSTALL,
    SAMPLE_RATE,
    Audio,
    AudioError,
)
from ui import glossary, safe
from ui.listen.cache import spoken
from ui.listen.decode import decode_once, mic_length, upload_limit_mb
from ui.presets import CLIPS, SPOKEN, clip_names
from ui.state.listen import Listen

SOURCES = ("An example clip", "Your microphone", "Upload a file", "Type a sentence")
NO_SPEECH = (
    "No speech heard: the recording is silent (every 20 ms of it is quieter than -60 dB). "
    "Whisper would guess words in silence, so nothing is transcribed. Record again closer to "
    "the microphone, or pick another clip."
)


# What to do with the recorder, its refusals and its limit: a recording over the upload limit
# is refused by the server before the page sees it, and the recorder then says only “An error
# has occurred” (its limit is read once, at import: Streamlit's config is fixed by then).
MIC_HELP = (
    "Press the microphone button, say a sentence (a few seconds; the first 30 s are heard), "
    f"then press it again to stop. A recording can last up to {mic_length()} "
    f"({upload_limit_mb()} MB); a longer one is refused and the recorder says “An error has "
    "occurred”. If the recorder says “This app would like to use your microphone”, the browser "
    "refused it: allow the microphone in the site's settings (the icon left of the address) and "
    "reload. If it says “An error has occurred” after a short recording, the browser found no "
    "microphone. Either way, you can upload a file instead."
)


def said() -> str | None:
    """What the chosen audio says, when the app knows it: a shipped clip's sentence or the typed
    text; None for a recording or an upload."""
    source = st.session_state.get(Listen.source.key)
    if source == SOURCES[0]:
        return SPOKEN.get(str(st.session_state.get(Listen.clip.key)))
    if source == SOURCES[3]:
        return str(st.session_state.get(Listen.text.key) or "") or None
    return None


def choose() -> Audio | None:
    """The audio the visitor chose, or None (with a message saying what to do) when there is
    none yet or it cannot be used."""
    source = st.radio("Audio", SOURCES, horizontal=True, key=Listen.source.key)
    try:
        if source == SOURCES[0]:
            name = st.selectbox("Example clip", clip_names(), key=Listen.clip.key)
            return decode_once((CLIPS / f"{name}.wav").read_bytes())
        if source == SOURCES[1]:
            return _microphone()
        if source == SOURCES[2]:
            return _upload()
        return _typed()
    except AudioError as err:
        st.error(safe.md(str(err)))
        return None


def _microphone() -> Audio | None:
    limit = f"Up to {mic_length()} ({upload_limit_mb()} MB); the first 30 s are heard."
    recording = st.audio_input("Say a sentence", key=Listen.mic.key, sample_rate=16000, help=limit)
    if recording is None:
        glossary.box(MIC_HELP)
        return None
    return decode_once(recording.getvalue())


def _upload() -> Audio | None:
    limit = upload_limit_mb()  # the server's own limit: the uploader checks it in the browser
    upload = st.file_uploader(
        f"A {ACCEPTED} file (at most {limit} MB; the first 30 s are heard)",
        type=["wav", "flac", "ogg", "opus", "mp3"],  # the picker's filter; content is checked
        key=Listen.file.key,
        max_upload_size=limit,
    )
    if upload is None:
        glossary.box("Upload a recording of speech to see where each written word listened.")
        return None
    return decode_once(upload.getvalue())


def _typed() -> Audio | None:
    if shutil.which("espeak-ng") is None:
        glossary.box(
            "Typed text is spoken by espeak-ng, which is not installed here. Install it with "
            f"`{ESPEAK_INSTALL}` and reload, or pick a clip, record or upload instead."
        )
        return None
    text = st.text_input("A sentence for espeak-ng to speak", key=Listen.text.key, max_chars=300)
    if not text.strip():
        glossary.box("Type a sentence (a few words) and espeak-ng will say it to Whisper.")
        return None
    return spoken(text)


def notices(audio: Audio) -> None:
    """What was done to the audio (stereo mixed, resampled, cut to 30 s, clipping), and the
    clip itself to play."""
    for notice in audio.notices:
        glossary.box(safe.md(notice))
    st.audio(wav_bytes(audio.samples_n), format="audio/wav")


def wav_bytes(samples_n: NDArray[np.float32]) -> bytes:
    """16 kHz mono 16-bit WAV of the samples as they are (st.audio would scale a NumPy array to
    full loudness, and divide by zero on silence)."""
    buf = io.BytesIO()
    sf.write(buf, samples_n, SAMPLE_RATE, format="WAV", subtype="PCM_16")
    return buf.getvalue()
