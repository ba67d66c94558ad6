"""The Listen page's views of one heard clip: the transcript as tokens, cross-attention tokens ×
time for a chosen head, every head's alignment score, a token's row over the spectrogram with
the moment it listened to played back, and the decoder's and encoder's self-attention."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable

import numpy as np
import pandas as pd
import streamlit as st
from numpy.typing import NDArray

import explorer
from attention_core.core.pieces import show_piece
from attention_core.models.whisper.audio import SAMPLE_RATE, Audio
from explorer.streamlit_adapter import pool_mel
from ui import explore, glossary, safe
from ui.cache import get_whisper
from ui.listen.cache import Heard, clip_id, encoder_span
from ui.listen.source import wav_bytes
from ui.state.listen import LISTEN, Listen
from ui.state.shared import FRAME
from viz import spectrogram

PLAY_S = 1.0  # how much audio a token's moment plays
FRAME_S = spectrogram.FRAME_S
NAMED = "named by the model's makers"
SCORES_LABEL = "Which heads follow time? Every head scored"
SCORES_OPEN = "lis_scores_open"  # the heads' table is open (built only then)
ENCODER_LABEL = "The encoder's frames attending to each other"
ENCODER_OPEN = "lis_encoder_open"  # the encoder's section is open (its view computed only then)


def shown(heard: Heard) -> list[str]:
    """Every token (prompt + text) as written, spaces as "▁"."""
    return [show_piece(t) for t in heard.tokens]


def text_tokens(heard: Heard) -> list[str]:
    """The transcript's tokens as written (the prompt left out)."""
    return shown(heard)[heard.n_prompt :]


def missed_words(said: str, heard: str) -> tuple[int, int]:
    """How many of the words said are not in the transcript, in order (case and punctuation
    ignored), and how many words were said."""
    said_w, heard_w = (re.findall(r"[\w']+", t.lower()) for t in (said, heard))
    kept = sum(b.size for b in difflib.SequenceMatcher(a=said_w, b=heard_w).get_matching_blocks())
    return len(said_w) - kept, len(said_w)


def transcript(heard: Heard, said: str | None = None) -> None:
    """What was said (when the app knows it), the transcript, then its tokens."""
    if said:
        glossary.say(f"**Said:** {safe.md(said)}")
    glossary.say(f"**Whisper heard:** {safe.md(heard.text)}")
    if said and (missed := missed_words(said, heard.text))[0]:
        glossary.note(
            f"Whisper misheard {missed[0]} of the {missed[1]} words said: its model of speech "
            "is small (tiny.en), and every number below is about what it wrote, not what was "
            "said."
        )
    glossary.note("As tokens: " + " · ".join(safe.token(t) for t in text_tokens(heard)))


def cross_view(heard: Heard, layer: int, head: int) -> dict[str, int]:
    """The view the cross-attention explorer opens on: the shared layer and head (the URL's,
    Whisper's opening alignment head at first) and the page's token."""
    n_text = len(heard.token_ids) - heard.n_prompt
    token = min(max(int(LISTEN.token), 0), n_text - 1)
    return {"layer": layer, "head": head, "token": token}


def _cross_told(heard: Heard) -> Callable[[], None]:
    """The callback taking the explorer's report {layer, head, token}: the shared layer and head
    and the page's token follow it (a value out of range is left out)."""
    n_layers, n_heads, n_tokens = heard.cross_pattern_lhqk.shape[:3]
    limits = {"layer": n_layers, "head": n_heads, "token": n_tokens - heard.n_prompt}
    entries = {"layer": (FRAME, "layer"), "head": (FRAME, "head"), "token": (LISTEN, "token")}

    def take() -> None:
        reported = (LISTEN.cross or {}).get("view") or {}
        for field, top in limits.items():
            value = reported.get(field)
            if isinstance(value, int) and 0 <= value < top:
                setattr(*entries[field], value)
        explore.told(Listen.cross.key, reported)

    return take


def outside_share_lh(heard: Heard) -> NDArray[np.float64]:
    """Per head: the share of a writing row's weight on the frames outside the speech span (the
    silence the view cuts off), averaged over the rows."""
    lo, hi = heard.alignment.span
    rows_lhqk = heard.cross_pattern_lhqk[:, :, heard.rows]
    inside = rows_lhqk[..., lo:hi].sum(-1, dtype=np.float64) / rows_lhqk.sum(-1, dtype=np.float64)
    return 1.0 - inside.mean(-1)


def outside_words(heard: Heard) -> str:
    """What the cut-off silence holds, in the heads' own numbers."""
    lo, hi = (f * spectrogram.FRAME_S for f in heard.alignment.span)
    share = outside_share_lh(heard)
    return (
        f"Only the speech is drawn ({lo:.2f}–{hi:.2f} s); the rest of Whisper's 30-second "
        "window (silence, and the padding that fills the window) holds "
        f"{share.mean():.0%} of a row's weight on average over the "
        f"{share.size} heads (from {share.min():.0%} in one head to {share.max():.0%} in another)."
    )


def cross(heard: Heard, layer: int, head: int) -> None:
    """Cross-attention tokens × time over the speech span under the sound itself (the log-mel
    pooled to the same 20 ms frames), every layer and head drawn in the browser (the explorer),
    its layers fetched from the block route (part "cross") out of the clip kept in the trace
    store; opening on the shared layer and head; a click there moves them (and the token
    below)."""
    lo, hi = heard.alignment.span
    explorer.mount_cross(
        heard,
        get_whisper().config,
        (lo, hi),
        explore.given(Listen.cross.key, cross_view(heard, layer, head)),
        _cross_told(heard),
        key=Listen.cross.key,
        clip=clip_id(heard),
        named=heard.alignment_heads,
        caption=(
            "Each row is the decoder writing that token (it reads the words before it and "
            "listens to the audio to choose it), each column 20 ms of the audio. "
            + outside_words(heard)
            + " A head that "
            "follows the speech draws a bright diagonal: each word listens near where it was "
            "said. Colours run from 0 to this head's largest weight (the number on the bar). "
            "Click a cell: the token below follows. ← → change the head, ↑ ↓ the layer."
        ),
        mel_mf=pool_mel(heard.mel_ft, lo, hi),
    )


def scores_table(heard: Heard) -> pd.DataFrame:
    """Every head's alignment scores, the model's own alignment heads marked."""
    al = heard.alignment
    rows = [
        {
            "layer": layer,
            "head": head,
            "monotone": float(al.monotone_lh[layer, head]),
            "concentrated": float(al.concentrated_lh[layer, head]),
            NAMED: (layer, head) in heard.alignment_heads,
        }
        for layer in range(al.monotone_lh.shape[0])
        for head in range(al.monotone_lh.shape[1])
    ]
    return pd.DataFrame(rows)


def scores(heard: Heard) -> None:
    """The alignment table with how to read it, built only while its section is open: a table
    loads 1.2 MB of the browser's table code (measured on a first visit: with the table, the
    token view and the decoder's view closed, the browser's work before the first chart fell
    from ~2.9 s to 1.3-2.2 s of main-thread time)."""
    section = st.expander(SCORES_LABEL, key=SCORES_OPEN, on_change="rerun")
    if not section.open:
        return
    with section:
        glossary.say(
            "**Which heads follow time?** *monotone*: does the moment each token listens to "
            "most move forward with the words (a rank correlation: 1 = always forward, 0 = no "
            "order)? *concentrated*: does it listen to a few moments or everywhere (1 = all its "
            "weight on one moment, 0 = spread evenly over the speech)? The last column marks "
            "the heads Whisper's makers list as following the speech (its “aligning” heads)."
        )
        st.dataframe(styled_scores(heard), hide_index=True, key="lis_scores")


def styled_scores(heard: Heard) -> pd.io.formats.style.Styler:
    """The alignment table as the page shows it (two decimals)."""
    return scores_table(heard).style.format({"monotone": "{:.2f}", "concentrated": "{:.2f}"})


def moment(heard: Heard, layer: int, head: int, token: int) -> tuple[float, float]:
    """Start and end (s) of the audio to play for text token ``token``: from the frame it
    attends to most (in the speech span), PLAY_S long."""
    frame = int(heard.alignment.peak_lhq[layer, head, token])
    start = round(frame * FRAME_S, 2)
    return start, round(start + PLAY_S, 2)


def excerpt(audio: Audio, start: float, end: float) -> NDArray[np.float32]:
    """The samples from ``start`` to ``end`` seconds. (st.audio's own start_time and end_time
    are whole seconds, too coarse for a 20 ms frame, so the moment is cut out instead.)"""
    return audio.samples_n[round(start * SAMPLE_RATE) : round(end * SAMPLE_RATE)]


def token_view(heard: Heard, audio: Audio, layer: int, head: int) -> None:
    """A token's cross-attention row over the spectrogram, and its moment played back."""
    words = text_tokens(heard)
    token = st.selectbox(
        "A token",
        range(len(words)),
        format_func=lambda i: f"{i}: {words[i]}",
        key=Listen.token.key,
    )
    lo, hi = heard.alignment.span
    row = heard.cross_pattern_lhqk[layer, head, heard.rows.start + token, lo:hi]
    fig = spectrogram.spectrogram(heard.mel_ft, (lo, hi), row, words[token])
    st.plotly_chart(fig, key="lis_spectrogram", width="stretch")
    start, end = moment(heard, layer, head, token)
    end = min(end, audio.seconds)
    glossary.say(
        f"{safe.token(words[token])} listens most to the moment at **{start:.2f} s**; "
        f"play from there ({start:.2f}–{end:.2f} s):"
    )
    st.audio(wav_bytes(excerpt(audio, start, end)), format="audio/wav")


def decoder_self(heard: Heard, layer: int, head: int) -> None:
    """The decoder's masked self-attention (every token, the prompt's included)."""
    title = f"Decoder self-attention, layer {layer}, head {head}"
    fig = spectrogram.token_pattern(heard.self_pattern_lhqk[layer, head], shown(heard), title)
    st.plotly_chart(fig, key="lis_decoder", width="stretch")


def encoder_self(heard: Heard, key: str, head: int) -> None:
    """The encoder's self-attention over the speech span, for a chosen encoder layer, computed
    only while its section is open: one encoder layer's pattern costs 0.1-0.3 s of CPU on a
    clip's first view (every other view of the page a few ms), so a first visit does not pay
    for it."""
    section = st.expander(ENCODER_LABEL, key=ENCODER_OPEN, on_change="rerun")
    if not section.open:
        Listen.encoder_layer.keep()  # its picker is not drawn: keep the layer chosen
        return
    n_layers = heard.encoder_hidden_ltd.shape[0] - 1
    with section:
        layer = int(
            st.selectbox("Encoder layer", range(n_layers), index=0, key=Listen.encoder_layer.key)
        )
        span = heard.alignment.span
        pattern = encoder_span(key, heard, layer, span)[head]
        title = f"Encoder self-attention over the speech, layer {layer}, head {head}"
        st.plotly_chart(spectrogram.frame_pattern(pattern, span, title), key="lis_encoder")


def engineers() -> None:
    """Where the numbers come from, by code name (closed)."""
    with st.expander("For engineers"):
        st.markdown(
            "- Audio: `attention_core.models.whisper.audio.load_audio` (soundfile, mono, soxr to "
            "16 kHz, first "
            "30 s) or `speak` (espeak-ng); the span shown is `speech_frames`, silence is "
            "`is_silent`.\n"
            "- Model: `load_whisper()` (CTranslate2 `model.bin` read in NumPy), "
            "`transcribe(model, log_mel(samples))` → `WhisperTrace`: `cross_pattern_lhqk` "
            "[4, 6, T, 1500], `self_pattern_lhqk` [4, 6, T, T], `alignment_heads` (the "
            "table's last column: the list in the model's config.json).\n"
            "- Scores: `attention_core.methods.alignment.head_alignment` (per head: Spearman's ρ "
            "of "
            "`peak_lhq` against token order; mean 1 − entropy / log(frames) over the span).\n"
            "- The encoder's self-attention: `encoder_pattern(model, encoder_hidden_ltd, layer)` "
            "for the layer shown only (54 MB at 1500 frames), cut to the span and cached, "
            "computed only once its section is opened.\n"
            "- Cached (`ui/listen/cache.py`) by the SHA-256 of the 16 kHz samples."
        )
