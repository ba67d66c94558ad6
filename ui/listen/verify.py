"""Listen's "Verify against the reference library" button: the clip shown, run through
CTranslate2 and transformers (references.whisper) in this process, and how far their numbers are
from ours (the table and the plain sentence of ui.verify). One check per clip is kept for every
visitor."""

from __future__ import annotations

import time

import streamlit as st

from references.text import INSTALL, NEEDS, round_up
from references.whisper import TOL_ATTENTION, TOL_ENCODER, check_clip
from server.budget import Busy, reserved, verify_peak
from ui import glossary
from ui.cache import get_whisper, trace_store
from ui.listen.cache import Heard
from ui.state.shared import VERIFY, Verify
from ui.verify import BUTTON, Verdict, differ, engineers, lacking, table

WHISPER_LIBRARY = "CTranslate2 and transformers"
WHISPER_CALLS = (
    '`ctranslate2.models.Whisper(folder, device="cpu", compute_type="float32")` on the '
    "package's `model.bin`: `encode` for the encoder's output, `generate(features, [prompt], "
    "beam_size=1)` for the greedy tokens; `transformers.WhisperForConditionalGeneration` with "
    "the same weights mapped in (`references.whisper.mapped_state`, eager attention) and "
    "`output_attentions=True` on our tokens for every attention"
)


# Worst case 4 × a few hundred bytes: only the verdict is kept (the check peaks at +0.8 GB: the
# encoder's 4 × 54 MB of self-attention from transformers, and the models loaded once).
@st.cache_data(max_entries=4, show_spinner=False)
def verified_clip(key: str, _heard: Heard, _tokens: tuple[str, ...]) -> Verdict:
    """Run the clip whose samples hash to ``key`` through Whisper's reference libraries and compare
    with ``_heard`` (not hashed: the key names it); ``_tokens``: its tokens as shown."""
    start = time.perf_counter()
    with reserved(trace_store(), verify_peak("whisper", 1)):  # Busy, nothing loaded, if no room
        problem, found = check_clip(get_whisper(), _heard, list(_tokens))
    return Verdict(found, problem, time.perf_counter() - start)


SHARED_INPUT = (
    "All of them read the same input: the log-mel spectrogram our engine made of the sound (its "
    "loudness in 80 pitch bands, every 10 ms), so this check covers everything after that step, "
    "not the step itself."
)


def clip_summary(verdict: Verdict, n_tokens: int) -> str:
    """The one plain sentence a learner reads about a clip."""
    encoder, *weights = verdict.differences
    attention = round_up(max(d.relative for d in weights))
    if not all(d.agrees for d in verdict.differences):
        numbers = differ(WHISPER_LIBRARY, verdict)
    else:
        numbers = (
            f"Our numbers and those of {WHISPER_LIBRARY} agree on this clip: the encoder's "
            f"output to within {round_up(encoder.relative)} times its largest number, every "
            f"attention weight to within {attention}. That is rounding in the last digits a "
            "computer keeps."
        )
    numbers += " " + SHARED_INPUT
    if verdict.token_problem:
        return f"CTranslate2 writes another transcript: {verdict.token_problem}. " + numbers
    return f"CTranslate2 writes the same {n_tokens} tokens as ours. " + numbers


def _clip_engineers(verdict: Verdict, n_tokens: int) -> str:
    return (
        f"- Reference: {WHISPER_CALLS}, in this process (`references.whisper.check_clip`), on "
        "the log-mel our engine read (`Heard.mel_ft`).\n"
        "- Ours: `Heard.token_ids` (text after the prompt), `encoder_hidden_ltd[-1]`, "
        "`cross_pattern_lhqk`, `self_pattern_lhqk`, and every encoder layer's self-attention "
        "recomputed by `encoder_pattern` (1500 frames).\n"
        "- Largest |ours − theirs|; the encoder's output relative to its largest |value|, "
        f"tolerance {TOL_ENCODER:g}; attention weights absolute, tolerance {TOL_ATTENTION:g} "
        "(as `tests/core/test_whisper_exact.py`).\n"
        f"- {n_tokens} tokens; the reference libraries took {verdict.seconds:.1f} s when this "
        "clip was first checked (loading included), kept per clip (the SHA-256 of its samples) "
        "for every visitor (`st.cache_data`, 4 entries).\n"
        f"- Needs {', '.join(NEEDS['whisper'])}: `{INSTALL['whisper']}`."
    )


def button(heard: Heard, key: str, tokens: list[str]) -> None:
    """Listen's button, and after it is pressed the check of the clip shown (``key``: the hash of
    its samples; ``tokens``: every token, as shown), kept on screen until the clip changes."""
    glossary.note(
        "Run this clip through CTranslate2, the library this model's file was made for, and "
        "transformers, with the same weights, and see how far their numbers are from ours."
    )
    if st.button(BUTTON, key=Verify.run.key, icon=":material/fact_check:"):
        VERIFY.clip = key
    if VERIFY.clip != key or lacking("whisper"):
        return
    try:
        with st.spinner(f"Running this clip through {WHISPER_LIBRARY}…"):
            verdict = verified_clip(key, heard, tuple(tokens))
    except Busy as err:
        glossary.box(str(err), icon=":material/hourglass_empty:", kind="warning")
        return
    n_tokens = len(heard.token_ids) - heard.n_prompt
    glossary.say(clip_summary(verdict, n_tokens))
    table(verdict)
    engineers(_clip_engineers(verdict, n_tokens))
