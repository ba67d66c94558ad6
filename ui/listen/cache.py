"""The cached computations of the Listen page: each heard clip's transcript and attentions kept by
the hash of its 16 kHz samples (a few clips), on Whisper as ``ui.cache`` loads it once per server.

A kept clip is a ``Heard``, not the engine's WhisperTrace (which holds the model, 75 MB of
weights), kept in the trace store: counted in the memory budget (server.budget) at its size.
The encoder's self-attention is computed for the one layer shown and cut to the speech span
before it is kept. The block route reads a kept clip's cross-attention by the name the page gave
the browser (``clip_id``, ``held``).

The shipped example clips are heard once when a replica starts (``ui.listen.warm``) and kept for
its life (``keep``): outside the store's least-recently-used order, where a class's uploaded
clips (each lasting too, ~14 MB) would push them out, and counted in the one memory budget by a
reservation that is never given back (``server.budget``: about 14 MB a clip, 54 MB for four)."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import cast

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attention_core import log_mel, transcribe
from attention_core.methods.alignment import Alignment, head_alignment, writing_rows
from attention_core.methods.word_timing import WordTiming, word_timing
from attention_core.models.whisper.audio import Audio, speak
from attention_core.models.whisper.forward import encoder_pattern
from server.budget import HEARD_PEAK, nbytes, reserved
from server.trace_store import freeze
from ui.cache import get_whisper, trace_store

F32 = NDArray[np.float32]


@dataclass(frozen=True)
class Heard:
    """What the page shows of one transcribed clip."""

    text: str  # the transcript
    token_ids: tuple[int, ...]  # prompt + text tokens
    tokens: tuple[str, ...]  # each token as the vocabulary writes it
    n_prompt: int  # the prompt's tokens come first
    mel_ft: F32  # [80, 3000] the log-mel input
    cross_pattern_lhqk: F32  # [4, 6, T, 1500]
    self_pattern_lhqk: F32  # [4, 6, T, T]
    encoder_hidden_ltd: F32  # [5, 1500, d]: what enters each encoder layer (and the last)
    alignment_heads: tuple[tuple[int, int], ...]
    alignment: Alignment  # every head scored on the rows that wrote the text, over the speech
    key: str  # the SHA-256 of its samples (``digest``): with the span, where the store keeps it
    timing: WordTiming  # the words placed in time by the alignment heads (a few kB)

    @property
    def rows(self) -> slice:
        """The cross-attention rows that wrote the text tokens, in order (row r reads token r
        and writes token r + 1: ``attention_core.methods.alignment.writing_rows``)."""
        return slice(*writing_rows(self.n_prompt, len(self.token_ids)))


def digest(samples_n: F32) -> str:
    """The key of a clip: SHA-256 of its float32 samples."""
    return hashlib.sha256(np.ascontiguousarray(samples_n, dtype=np.float32).tobytes()).hexdigest()


def clip_id(clip: Heard) -> str:
    """The name a page gives the browser for ``clip`` (its key and speech span): the browser
    asks the block route for the clip's cross-attention by it, and ``held`` finds the clip."""
    lo, hi = clip.alignment.span
    return f"{clip.key}:{lo}-{hi}"


_CLIP_ID = re.compile(r"([0-9a-f]{64}):(\d{1,4})-(\d{1,4})")


def held(model: str, clip: str) -> Heard | None:
    """The clip stored under ``clip`` (``clip_id``'s name) for ``model``, or None when this
    process does not hold it (evicted, stored by another replica, or not such a name). Nothing
    is computed: the clip's audio never reaches the block route. Read by ``ui.routes``."""
    found = _CLIP_ID.fullmatch(clip)
    if found is None:
        return None
    span = (int(found[2]), int(found[3]))
    if model == "whisper" and (kept := _kept.get((found[1], span))) is not None:
        return kept
    return cast("Heard | None", trace_store().peek((model, found[1], span)))


_kept: dict[tuple[str, tuple[int, int]], Heard] = {}  # (key, span) -> a clip kept for good
_keeping = threading.Lock()  # held while ``keep`` hears the examples: a page asking waits
KEEP_WAIT_S = 60.0  # at most (four clips take 4-8 s on one core), then the page hears its own
_passes = [0]  # clips transcribed by this process (``passes``), under _counting
_counting = threading.Lock()


def passes() -> int:
    """How many clips this process has transcribed (Whisper passes): a page that found its clip
    already heard leaves it unchanged (tests read it)."""
    with _counting:
        return _passes[0]


def keep(clips: Iterable[tuple[str, F32, tuple[int, int]]]) -> int:
    """``heard`` for clips kept for the life of this process (the shipped examples: each clip's
    key, samples and span), heard now if not kept yet (``HEARD_PEAK`` held meanwhile), their
    bytes reserved in the memory budget for good; how many are kept (one the budget has no room
    for is not). A page asking for a clip meanwhile waits for all of them (``heard``)."""
    with _keeping:
        for key, samples_n, span in clips:
            if (key, span) in _kept:
                continue
            with reserved(trace_store(), HEARD_PEAK):
                clip = _listen(key, samples_n, span)
            freeze(clip)  # one clip for every visitor, as the store makes its own
            if trace_store().reserve(nbytes(clip)):
                _kept[(key, span)] = clip
        return len(_kept)


def forget_kept() -> None:
    """Drop the kept clips and give their bytes back (for tests that count the budget)."""
    with _keeping:
        for clip in _kept.values():
            trace_store().give_back(nbytes(clip))
        _kept.clear()


def heard(key: str, _samples_n: F32, span: tuple[int, int]) -> Heard:
    """The clip whose samples hash to ``key`` transcribed; every head scored over ``span``.
    A kept clip (``keep``) as it is; any other kept in the trace store beside the sentences'
    traces (shared, counted in the one memory budget at its real size, least recently used out
    first, one pass per core at a time); ``HEARD_PEAK`` held for it while Whisper listens."""
    if _keeping.locked() and _keeping.acquire(timeout=KEEP_WAIT_S):  # examples being heard
        _keeping.release()
    if (kept := _kept.get((key, span))) is not None:
        return kept

    def compute() -> Heard:
        return _listen(key, _samples_n, span)

    with st.spinner("Whisper is listening…"):  # shown only if it takes a moment (Streamlit)
        return trace_store().get(("whisper", key, span), compute, expected=_peak, lasting=True)


def _peak() -> int:
    return HEARD_PEAK


def _listen(key: str, samples_n: F32, span: tuple[int, int]) -> Heard:
    model = get_whisper()
    with _counting:
        _passes[0] += 1
    trace = transcribe(model, log_mel(samples_n))
    n_prompt = len(trace.prompt_ids)
    return Heard(
        trace.text,
        trace.token_ids,
        tuple(trace.tokens),
        n_prompt,
        trace.mel_ft,
        trace.cross_pattern_lhqk,
        trace.self_pattern_lhqk,
        trace.encoder_hidden_ltd,
        trace.alignment_heads,
        head_alignment(trace.cross_pattern_lhqk, trace.writing_rows, span),
        key,
        word_timing(trace, len(samples_n)),
    )


# Worst case 4 × 6 heads × span² float16 (a 5 s clip: 250² × 6 × 2 B = 0.75 MB; 30 s: 27 MB).
@st.cache_data(max_entries=4, show_spinner="Computing the encoder's self-attention…")
def encoder_span(key: str, _heard: Heard, layer: int, span: tuple[int, int]) -> NDArray[np.float16]:
    """Encoder layer ``layer``'s self-attention [6, frames, frames] over ``span`` alone, kept
    as float16 (weights in [0, 1]: about 3 significant digits)."""
    full = encoder_pattern(get_whisper(), _heard.encoder_hidden_ltd, layer)
    return full[:, span[0] : span[1], span[0] : span[1]].astype(np.float16)


# Worst case 16 × ~1 MB (20 s of 16 kHz float32 each, at most 300 characters).
@st.cache_data(max_entries=16, show_spinner="espeak-ng is speaking…")
def spoken(text: str) -> Audio:
    """``text`` spoken by espeak-ng (AudioError, not cached, when it cannot be)."""
    return speak(text)
