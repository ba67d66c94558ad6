"""Step: decoder and cross-attention, each on a real model trained for it: masked
self-attention on SmolLM2 (a decoder) over the tour's sentence, cross-attention on Whisper
tiny.en (an encoder-decoder) over a shipped clip of speech."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attention_core.core.family import Trace
from attention_core.methods.roles import LABELS, RULE
from attention_core.models.whisper.audio import speech_frames
from ui import glossary
from ui.cache import OPENING_HEAD, get_trace, model_error, whisper_error
from ui.listen.cache import Heard, digest, heard
from ui.listen.decode import decode_once
from ui.listen.source import wav_bytes
from ui.listen.views import outside_share_lh, text_tokens, transcript
from ui.presets import CLIPS, SPOKEN, clip_names
from ui.router import Shared
from ui.state.tour import Tour
from ui.text.cache import head_roles
from ui.text.decoder import MODEL as DECODER
from ui.tour.common import chart, engineers
from viz import spectrogram
from viz.pattern_heatmap import make_pattern_heatmap

TITLE = "Decoder and cross-attention"
PAGE = "listen"  # the page that explores this step further (ui.registry)
HINT = "record your own voice"  # what to do there
CLIP = "river"  # the clip the step opens on (examples/clips/river.wav)
PREVIOUS = "previous_token"  # the role score (methods.roles) the masked head is chosen by
FORWARD = 0.5  # a head "moves forward" through the audio from this rank correlation
THREE = st.column_config.NumberColumn(format="%.3f")  # weights for learners: three decimals
SECONDS = st.column_config.NumberColumn(format="%.2f")

INTRO = (
    "So far the tour has walked through an encoder (MiniLM), which reads a whole sentence at "
    "once. A model that writes text uses a **decoder**, whose self-attention is masked: each "
    "token sees only itself and the tokens before it. A decoder-only model such as SmolLM2 (or "
    "GPT) has that attention alone. The decoder of an **encoder-decoder** model (Whisper here, "
    "or a translator) adds a second one, **cross-attention**, to what the encoder made of its "
    "input. Both are shown here on real models trained that way."
)
TRANSLATION = (
    "The notes' example of an encoder-decoder is translation: the words being written look at "
    "the words of the sentence being translated. "
    "No translation model ships with this app (it works offline), so the cross-attention shown "
    "here is speech to text: the written words look at the audio instead of at a sentence. The "
    "arithmetic is the same."
)


def render(shared: Shared, trace: Trace) -> None:
    glossary.say(INTRO)
    glossary.note(
        "The sidebar's layer and head are MiniLM's; this step picks its own head on each model, "
        "by the rule it states."
    )
    glossary.heading("1. Masked self-attention (SmolLM2, a decoder)", level="subheader")
    masked(shared.text)
    glossary.heading("2. Cross-attention (Whisper tiny.en, an encoder-decoder)", level="subheader")
    cross()
    _engineers()


class PreviousHead(NamedTuple):
    """SmolLM2's head with the largest previous-token score on a sentence."""

    layer: int
    head: int
    share: float  # the share of all its weight that lands on the token just before each token
    even: float  # what an even spread over the visible tokens would put there
    named: bool  # whether the share passes the rule (methods.roles.RULE) for that job


def previous_head(text: str) -> PreviousHead:
    """SmolLM2's head (layer, head) with the largest previous-token score on ``text``
    (TransformerLens's: the share of all its weight on the token just before each one)."""
    scores = head_roles(DECODER, text)
    share_lh = scores.scores_lh[PREVIOUS]
    layer, head = np.unravel_index(int(np.argmax(share_lh)), share_lh.shape)
    share, even = float(share_lh[layer, head]), scores.even[PREVIOUS]
    return PreviousHead(int(layer), int(head), share, even, RULE.passes(PREVIOUS, share, even))


def job_words(best: PreviousHead) -> str:
    """Whether the rule names that head a previous-token head, with the numbers it reads."""
    if best.named:
        return f"enough for the rule to call it a **{LABELS[PREVIOUS]} head**"
    return (
        f"not enough for the rule to call it a {LABELS[PREVIOUS]} head (that needs "
        f"{RULE.needs(best.even):.0%}: the {best.even:.0%} an even spread would give, and "
        f"{RULE.margin * 100:.0f} points more)"
    )


def masked(text: str) -> None:
    """One SmolLM2 head over the tour's sentence: the upper triangle is 0."""
    if error := model_error(DECODER):
        glossary.box(
            f"SmolLM2 could not be loaded, so this part is not shown. {error}", kind="warning"
        )
        return
    trace = get_trace(DECODER, text)
    best = previous_head(text)
    layer, head, share = best.layer, best.head, best.share
    pattern = np.asarray(trace.pattern_lhqk[layer][head])
    tokens = list(trace.tokens.tokens)
    n_layers, n_heads = trace.config.n_layers, trace.config.n_heads
    glossary.say(
        "SmolLM2 was trained to predict the next token from the ones before it, so a token may "
        "never look ahead at the words it is meant to guess: every weight above the diagonal is "
        "exactly 0 (those scores are set to −∞ before softmax). Shown is the head, of its "
        f"{n_layers * n_heads}, that looks most at the token just before: **layer {layer}, "
        f"head {head}**: **{share:.3f}** of all its weight lands on the token just before each "
        f"token, {job_words(best)}."
    )
    chart(
        make_pattern_heatmap(pattern, tokens, title=f"SmolLM2, layer {layer}, head {head}"),
        "learn_dec_self",
        "How to read this: each row is a token (the query), its weights over the tokens it may "
        "look at (the keys) sum to 1; the cells right of the diagonal are the future, masked.",
    )
    st.latex(
        rf"\mathrm{{softmax}}\!\left(\frac{{QK^{{\top}}}}{{\sqrt{{{trace.config.d_head}}}}} + M"
        r"\right)V,\qquad M_{ij} = -\infty \text{ for a key } j \text{ after the query } i"
    )
    above = pattern[np.triu_indices(len(tokens), 1)]
    c = st.columns(2)
    glossary.metric(
        "largest weight above the diagonal", f"{above.max(initial=0.0):.3f}", where=c[0]
    )
    glossary.metric("share of its weight on the token just before", f"{share:.3f}", where=c[1])


def cross_head(clip: Heard) -> tuple[int, int]:
    """The head shown: one the model's makers list as aligning text with speech (the Listen
    page's opening head when it is listed)."""
    return OPENING_HEAD if OPENING_HEAD in clip.alignment_heads else clip.alignment_heads[0]


def example_clip() -> Heard:
    """The shipped clip the learner picks (the same choice on every Whisper step), heard, played
    and its transcript shown beside what it says."""
    names = clip_names()
    name = st.selectbox("Example clip", names, index=names.index(CLIP), key=Tour.clip.key)
    audio = decode_once((CLIPS / f"{name}.wav").read_bytes())  # once per server, not per rerun
    clip = heard(digest(audio.samples_n), audio.samples_n, speech_frames(audio.samples_n))
    st.audio(wav_bytes(audio.samples_n), format="audio/wav")
    transcript(clip, SPOKEN[name])
    return clip


def cross() -> None:
    """Whisper's cross-attention on a shipped clip, tokens × seconds over the speech."""
    if error := whisper_error():
        glossary.box(
            f"Whisper could not be loaded, so this part is not shown. {error}", kind="warning"
        )
        return
    clip = example_clip()
    layer, head = cross_head(clip)
    lo, hi = clip.alignment.span
    rows_qk = clip.cross_pattern_lhqk[layer, head, clip.rows, lo:hi]
    outside = float(outside_share_lh(clip)[layer, head])  # weight on the cut frames (Listen's)
    title = f"Whisper, cross-attention of layer {layer}, head {head} (an aligning head)"
    fig = spectrogram.cross_attention(rows_qk, text_tokens(clip), (lo, hi), title)
    chart(
        fig,
        "learn_dec_cross",
        "How to read this: each row is the decoder writing that token, each column 20 ms of "
        "the audio (the speech only; the rest of Whisper's 30-second window, silence and the "
        f"padding that fills the window, is cut off and holds {outside:.0%} of a row's weight on "
        "average); a bright diagonal means the words look at the audio in the order they were "
        "said.",
    )
    n_heads = clip.cross_pattern_lhqk.shape[1]
    d_head = clip.encoder_hidden_ltd.shape[-1] // n_heads
    st.latex(
        rf"\mathrm{{softmax}}\!\left(\frac{{Q_{{\text{{words}}}} K_{{\text{{audio}}}}^{{\top}}}}"
        rf"{{\sqrt{{{d_head}}}}}\right) V_{{\text{{audio}}}}"
    )
    glossary.say(cross_words(clip, layer, head))
    _moments(clip, layer, head)
    glossary.box(TRANSLATION, icon=":material/translate:")


def cross_words(clip: Heard, layer: int, head: int) -> str:
    """Where the queries, keys and values come from, and whether this head and the others
    move forward with the words, by one yardstick (``FORWARD``)."""
    rho = float(clip.alignment.monotone_lh[layer, head])
    n_cross = clip.cross_pattern_lhqk.shape[0] * clip.cross_pattern_lhqk.shape[1]
    moves = (
        "moves forward through the audio as the words do"
        if rho >= FORWARD
        else "does not move steadily forward"
    )
    return (
        "In cross-attention the **queries come from the written words**, the **keys and values "
        "from the audio**, as the encoder made it (one vector per 20 ms). In this head the "
        f"moment each token looks at most {moves} (rank correlation **{rho:.3f}**, 1 = always "
        f"forward; we call it forward from {FORWARD}). Whisper's makers picked "
        f"{len(clip.alignment_heads)} of its {n_cross} cross-attention heads to time words "
        f"by; on this clip {others_forward(clip)} of the other "
        f"{n_cross - len(clip.alignment_heads)} move forward too, by the same yardstick, and "
        "the Listen page scores all of them. Each "
        "row is the step "
        "that wrote the word: the decoder reads the words before it and listens to the audio "
        "to choose it."
    )


def others_forward(clip: Heard) -> int:
    """How many cross-attention heads not on the makers' list move forward with the words on
    ``clip`` (rank correlation at least ``FORWARD``)."""
    rho_lh = clip.alignment.monotone_lh
    listed = np.zeros(rho_lh.shape, dtype=bool)
    for layer, head in clip.alignment_heads:
        listed[layer, head] = True
    return int(np.sum((np.nan_to_num(rho_lh, nan=-1.0) >= FORWARD) & ~listed))


def moments(clip: Heard, layer: int, head: int) -> tuple[list[float], NDArray[np.float32]]:
    """For each written token: the second it looks at most and the weight there."""
    peaks_q = clip.alignment.peak_lhq[layer, head]
    rows_qk = clip.cross_pattern_lhqk[layer, head, clip.rows]
    seconds = [round(int(f) * spectrogram.FRAME_S, 2) for f in peaks_q]
    return seconds, rows_qk[np.arange(len(peaks_q)), peaks_q]


def _moments(clip: Heard, layer: int, head: int) -> None:
    seconds, weights = moments(clip, layer, head)
    st.dataframe(
        {
            "written token": text_tokens(clip),
            "looks most at (s)": seconds,
            "weight": weights,
        },
        key="learn_cross_table",
        width="stretch",
        hide_index=True,
        column_config={"weight": THREE, "looks most at (s)": SECONDS},
    )


def _engineers() -> None:
    with engineers():
        st.markdown(
            f"- Masked self-attention: `ui.cache.get_trace({DECODER!r}, text).pattern_lhqk"
            "[layer][head]` [T, T] (SmolLM2-135M, 30 layers × 9 heads, causal); the head is "
            f"the argmax of `head_roles({DECODER!r}, text).scores_lh[{PREVIOUS!r}]` "
            "(`methods.roles.role_scores`: TransformerLens's previous-token detector, error "
            'measure "mul": Σ(A ⊙ P) / ΣA with P[i, i−1] = 1), named by `RULE.passes`.\n'
            "- Cross-attention: `ui.listen.cache.heard(...)` = `transcribe(load_whisper(), "
            "log_mel(samples))`: `cross_pattern_lhqk` [4, 6, prompt + text tokens, 1500], cut to "
            "the text rows and the frames of `speech_frames(samples)`; the head is listed in "
            "`alignment_heads` of the model's config.json. Queries: the decoder stream "
            "[T, 384] × W_Q; keys and values: `encoder_hidden_ltd[-1]` [1500, 384] × W_K, W_V."
        )
