"""The Listen page's words in time: where in the sound each written word was heard (the engine's
``attention_core.methods.word_timing``, computed with the clip in ``ui.listen.cache``), drawn as
spans on the sound's time axis, and a word's stretch of the clip played when its button is
clicked (a rerun that cuts the samples and plays them: st.audio's own start and end times are
whole seconds)."""

from __future__ import annotations

import streamlit as st

from attention_core.models.whisper.audio import Audio
from ui import glossary, safe, show
from ui.listen.cache import Heard
from ui.listen.source import wav_bytes
from ui.listen.views import excerpt
from viz import spectrogram

PLAY_LABEL = "Click a word to hear it"


def times(heard: Heard, word: int) -> tuple[float, float]:
    """Word ``word``'s start and end, in seconds, as the page shows them (two decimals; the
    engine's times are whole 20 ms frames, so the rounding loses nothing)."""
    timing = heard.timing
    return round(float(timing.word_starts[word]), 2), round(float(timing.word_ends[word]), 2)


def labels(heard: Heard) -> list[str]:
    """Each word's button: the word and its start ("rain. (2.56 s)"), Markdown made literal; a
    label met before gets the word's place added (a button is told apart by its label)."""
    out: list[str] = []
    for i, word in enumerate(heard.timing.words):
        label = f"{word.strip()} ({times(heard, i)[0]:.2f} s)"
        out.append(label if label not in out else f"{label} #{i + 1}")
    return [safe.md(label) for label in out]


def intro(heard: Heard) -> str:
    """What the strip is, in plain words, true of the clip shown."""
    n_heads = len(heard.alignment_heads)
    return (
        f"**Words in time.** Where in the sound each written word was heard, found from the "
        f"{n_heads} alignment heads' attention (the heads the model's makers list). Each bar "
        "is one word, from when it starts to when it ends; the first word starts at the "
        "beginning of the clip, silence included. Click a word below to hear its stretch."
    )


def strip(heard: Heard, audio: Audio) -> None:
    """The words as spans over the speech (the cross-attention view's time range), a button
    per word that plays its stretch, and the rule for engineers."""
    timing = heard.timing
    if not timing.words:
        glossary.box("No word could be placed in time: the clip is shorter than one 20 ms frame.")
        return
    glossary.say(intro(heard))
    fig = spectrogram.word_strip(
        timing.words, timing.word_starts, timing.word_ends, heard.alignment.span
    )
    show.plot(fig, "lis_words")
    names = labels(heard)
    chosen = st.pills(PLAY_LABEL, range(len(names)), format_func=lambda i: names[i])
    if chosen is not None:
        play(heard, audio, int(chosen))
    engineers()


def play(heard: Heard, audio: Audio, word: int) -> None:
    """Word ``word``'s start and end, and its stretch of the clip played at once."""
    start, end = times(heard, word)
    name = safe.token(heard.timing.words[word].strip())
    if end <= start:
        glossary.note(f"{name} takes no time on the path ({start:.2f} s): nothing to play.")
        return
    glossary.note(f"{name} was heard from **{start:.2f} s** to **{end:.2f} s**.")
    st.audio(wav_bytes(excerpt(audio, start, end)), format="audio/wav", autoplay=True)


def engineers() -> None:
    """The rule, by code name (closed)."""
    with st.expander("For engineers: how the words are placed"):
        st.markdown(
            "`attention_core.methods.word_timing.word_timing(trace, n_samples)`, the path equal "
            "to CTranslate2's `Whisper.align(features, [<|startoftranscript|>], [text ids], "
            "num_frames=n_samples // 160, median_filter_width=7)` (tests/core/"
            "test_word_timing.py):\n"
            "1. The alignment heads' cross-attention (config.json `alignment_heads`) on the rows "
            "<|startoftranscript|>, <|notimestamps|>, the text, <|endoftext|> (one more decoder "
            "step), cut to `n_samples // 320` frames and renormalized (softmax of the cut "
            "scores).\n"
            "2. Per head and frame, standardized over the rows; a median filter of width 7 "
            "along time; the mean over the heads.\n"
            "3. DTW on minus the rows that wrote the text and the end token (float32 costs; "
            "ties: diagonal, then up, then left): `align_path` (token, 20 ms frame).\n"
            "4. Words as faster-whisper splits them (a token starting with a space, "
            "punctuation or a special token begins one); a word starts at the first frame the "
            "path reaches its first token and ends at the first frame of the token after it; "
            "punctuation then joins its neighbour without changing its time. faster-whisper's "
            "trims of over-long words at sentence and segment boundaries are not applied.\n"
            "5. A click cuts the 16 kHz samples from start to end and plays them."
        )
