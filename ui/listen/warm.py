"""The Listen page's shared work, done once when a replica starts (``ui.warm`` calls ``warm``):
Whisper loaded, and every shipped example clip decoded, transcribed and its cross-attention
scored, kept for the replica's life (``ui.listen.cache.keep``). A student who opens Listen on an
example clip then waits for nothing but the page: its run finds the clip where ``heard`` looks
first, and the browser's layer requests find it where ``held`` looks first.

What the page's first view of a clip computes besides ``heard`` costs a few milliseconds
(measured per view with time.thread_time); the one view that costs more, the encoder's
self-attention (0.1-0.3 s), is computed only when its section is opened (``views.encoder_self``).
The first Listen page a process runs paid 0.1 s more once (pandas' table styling loaded on its
first use, Plotly's first bar figure): ``first_use`` pays it here instead.
"""

from __future__ import annotations

import sys
import time

from attention_core.models.whisper.audio import is_silent, speech_frames
from ui.cache import whisper_error
from ui.listen import views
from ui.listen.cache import digest, held, keep
from ui.listen.decode import decode_once
from ui.presets import CLIPS, clip_names
from viz import spectrogram


def _say(line: str) -> None:
    print(f"warm listen: {line}", file=sys.stderr, flush=True)


def first_use(key: str, span: tuple[int, int]) -> None:
    """The table and the word strip of a kept clip built once and dropped: what a process pays
    only the first time (the page's own calls, nothing drawn)."""
    clip = held("whisper", f"{key}:{span[0]}-{span[1]}")
    if clip is None:
        return
    views.styled_scores(clip).to_html()
    timing = clip.timing
    spectrogram.word_strip(timing.words, timing.word_starts, timing.word_ends, span).to_dict()


def warm() -> None:
    """Whisper loaded and the example clips heard and kept, once (a second call finds them
    kept and computes nothing). Never raises: a replica starts whatever happens here, and a
    clip left out is heard by its page as any other."""
    try:
        started = time.monotonic()
        if (error := whisper_error()) is not None:
            _say(f"Whisper not loaded, no clip heard: {error.splitlines()[0]}")
            return
        clips = []
        for name in clip_names():
            audio = decode_once((CLIPS / f"{name}.wav").read_bytes())
            if not is_silent(audio.samples_n):  # the page transcribes no silence either
                clips.append(
                    (digest(audio.samples_n), audio.samples_n, speech_frames(audio.samples_n))
                )
        kept = keep(clips)
        first_use(clips[0][0], clips[0][2])
        took = time.monotonic() - started
        _say(f"{kept} of {len(clips)} example clips heard and kept in {took:.1f} s")
    except Exception as err:  # anything at all: the replica must start, the line says what
        _say(f"stopped: {type(err).__name__}: {err}")
