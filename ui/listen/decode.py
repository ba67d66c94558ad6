"""The Listen page's audio, decoded once: a clip, an upload or a recording is read by
attention_core.models.whisper.audio.load_audio the first time its bytes are seen and kept by their
SHA-256, so
the reruns that every click on the page makes do not decode it again; a refused file's message is
kept the same way. The upload limit is Streamlit's own ``server.maxUploadSize``, read here, so
the server, the uploader, the message and the microphone's help say one number."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import streamlit as st

from attention_core.models.whisper.audio import MB, Audio, AudioError, load_audio

N_DECODED = 4  # clips kept: each at most 30 s of 16 kHz float32 (1.9 MB), a refused one a line
MIC_BYTES_PER_S = 16_000 * 2  # st.audio_input(sample_rate=16000) sends 16-bit mono WAV


def upload_limit_mb() -> int:
    """The largest upload the server takes, in MB of 2**20 bytes (.streamlit/config.toml)."""
    return int(st.get_option("server.maxUploadSize"))


def mic_length() -> str:
    """How long a microphone recording fits under the upload limit ("about 13 minutes")."""
    seconds = upload_limit_mb() * MB // MIC_BYTES_PER_S
    return f"about {seconds // 60} minutes" if seconds >= 120 else f"about {seconds} s"


_lock = threading.Lock()  # sessions run in threads of one process
_kept: OrderedDict[tuple[str, int], Audio | str] = OrderedDict()  # least recently used first


def _decode(data: bytes, max_bytes: int) -> Audio | str:
    """``data`` decoded (its samples read-only: the entry is shared by every rerun and every
    session that sends the same bytes), or the plain reason it cannot be."""
    try:
        audio = load_audio(data, max_bytes)
    except AudioError as error:
        return str(error)
    audio.samples_n.setflags(write=False)
    return audio


def decode_once(data: bytes) -> Audio:
    """``data`` as Whisper's input, decoded the first time these bytes are seen; raises
    AudioError (the same message each time) when they cannot be used.

    Kept here rather than in st.cache_data: its global size budget may evict an entry between
    two reruns (and would unpickle a 1.9 MB copy on every one); N_DECODED entries are bounded
    on their own (worst case 4 x 1.9 MB). Keys are the bytes' SHA-256, so an entry is found
    only by whoever sends the same bytes."""
    key = (hashlib.sha256(data).hexdigest(), upload_limit_mb() * MB)
    with _lock:
        found = _kept.get(key)
        if found is not None:
            _kept.move_to_end(key)
    if found is None:  # two sessions sending the same new bytes at once may both decode them
        found = _decode(data, key[1])
        with _lock:
            _kept[key] = found
            while len(_kept) > N_DECODED:
                _kept.popitem(last=False)
    if isinstance(found, str):
        raise AudioError(found)
    return found


def forget() -> None:
    """Drop every kept decode (for tests that count decodes)."""
    with _lock:
        _kept.clear()
