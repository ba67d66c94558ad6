"""Step: how Whisper writes one token. One block of Whisper's decoder in order, as the notes
teach the encoder-decoder: masked self-attention over the tokens written so far, cross-attention
to the encoder's output, the feed-forward; then the final LayerNorm, the linear layer to the
vocabulary and softmax; the cross-attention's keys and values computed once per clip; and where
attention came from. Every number is ``attention_core.lessons.decoder_block.writing``'s."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core.core.family import Trace
from attention_core.core.pieces import show_piece
from attention_core.lessons.decoder_block import SPECIAL_WORDS, Writing, writing
from attention_core.models.whisper.audio import speech_frames
from ui import safe
from ui.cache import get_whisper, whisper_error
from ui.listen.cache import Heard, digest, heard
from ui.listen.decode import decode_once
from ui.listen.source import wav_bytes
from ui.presets import CLIPS, clip_names
from ui.router import Shared
from ui.state.tour import TOUR, Tour
from ui.tour.common import THREE, chart, engineers
from ui.tour.decoder import CLIP, cross_head
from viz import spectrogram
from viz.norm_bars import make_norm_bars

TITLE = "How Whisper writes one token"
PAGE = "listen"  # the page that explores this step further (ui.registry)
HINT = "every token of your own voice"  # what to do there
NOTES_TOKEN = 2  # the notes' example: the third token written, the first two already there

INTRO = (
    "The previous step showed Whisper's two attentions one at a time. Here they are in order, "
    "inside one **decoder block**, as the notes teach the encoder-decoder: masked "
    "self-attention over the tokens written so far, then cross-attention to what the encoder "
    "made of the sound, then the feed-forward. Whisper tiny.en's decoder stacks {n} such "
    "blocks; after the last one, a final LayerNorm, a linear layer and softmax choose the next "
    "token. Follow one token as it is written, through one layer and head of your choice."
)
HISTORY = (
    "**Where attention came from.** Attention is older than the transformer. Before it, "
    "neural translation systems were encoder-decoders built from recurrent networks (RNNs), "
    "which read a sentence one word at a time; the first ones handed the decoder a single "
    "vector summing up the whole sentence. In 2014 Bahdanau, Cho and Bengio let the decoder "
    "look back at all of the encoder's vectors (one per word) each time it wrote a word, "
    "weighing them by how well they matched: attention, the ancestor of the cross-attention "
    "above. The transformer (“Attention Is All You Need”, 2017) kept attention, dropped the "
    "RNN, and used attention inside each half too (self-attention)."
)


# Worst case 16 × ~8 kB (two rows of weights, a few numbers).
@st.cache_data(max_entries=16, show_spinner="Following the token through the decoder…")
def followed(key: str, _clip: Heard, written: int, layer: int, head: int) -> Writing:
    """``writing`` on the kept clip whose samples hash to ``key``."""
    span = _clip.alignment.span
    audio_kd = _clip.encoder_hidden_ltd[-1]
    ids, n_prompt = _clip.token_ids, _clip.n_prompt
    return writing(get_whisper(), audio_kd, ids, n_prompt, written, (layer, head), span)


def render(shared: Shared, trace: Trace) -> None:
    if error := whisper_error():
        st.warning(f"Whisper could not be loaded, so this step is not shown. {error}")
        return
    n_layers, n_heads = get_whisper().config.n_layers, get_whisper().config.n_heads
    st.markdown(INTRO.format(n=n_layers))
    clip = _clip()
    written, layer, head = _choices(clip, n_layers, n_heads)
    w = followed(clip.key, clip, written, layer, head)
    tokens = [show_piece(t) for t in clip.tokens]
    st.markdown(
        f"To write {safe.token(tokens[w.written])}, Whisper works at the position just before "
        f"it, {safe.token(tokens[w.row])}, the last token written so far: that position's "
        "vector asks the questions (the query) in both attentions, and what comes out at the "
        "end predicts the next token."
    )
    st.subheader(f"1. Masked self-attention (layer {layer}, head {head})")
    _self(w, tokens)
    st.subheader(f"2. Cross-attention to the sound (layer {layer}, head {head})")
    _cross(w, clip, tokens)
    st.subheader(f"3. The feed-forward (layer {layer})")
    _ffn(w, get_whisper().config.d_ff)
    st.subheader("4. After the last block: the next token")
    _next(w, n_layers - 1)
    st.subheader("5. Computed once: the encoder's keys and values")
    _once(w)
    st.info(HISTORY, icon=":material/history_edu:")
    _engineers(w)


def _clip() -> Heard:
    names = clip_names()
    name = st.selectbox("Example clip", names, index=names.index(CLIP), key=Tour.clip.key)
    audio = decode_once((CLIPS / f"{name}.wav").read_bytes())  # once per server, not per rerun
    clip = heard(digest(audio.samples_n), audio.samples_n, speech_frames(audio.samples_n))
    st.audio(wav_bytes(audio.samples_n), format="audio/wav")
    st.markdown(f"**Whisper heard:** {safe.md(clip.text)}")
    return clip


def default_written(n_prompt: int, n_tokens: int) -> int:
    """The notes' example: the third token written (the first two already there), or the
    last one of a shorter transcript."""
    return min(n_prompt + NOTES_TOKEN, n_tokens - 1)


def _choices(clip: Heard, n_layers: int, n_heads: int) -> tuple[int, int, int]:
    """The written token, the decoder layer and the head (defaults: the notes' third token,
    the previous step's head)."""
    options = list(range(clip.n_prompt, len(clip.token_ids)))
    if TOUR.written not in options:  # unset, or a token of another clip
        TOUR.written = default_written(clip.n_prompt, len(clip.token_ids))
    first = cross_head(clip)
    if TOUR.block_layer is None or TOUR.block_head is None:
        TOUR.block_layer, TOUR.block_head = first
    shown = [show_piece(t) for t in clip.tokens]
    c = st.columns([2, 1, 1])
    written = c[0].selectbox(
        "Token being written",
        options,
        key=Tour.written.key,
        format_func=lambda i: f"{shown[i]} (token {i})",
    )
    layer = c[1].selectbox("Decoder layer", range(n_layers), key=Tour.block_layer.key)
    head = c[2].selectbox("Head", range(n_heads), key=Tour.block_head.key)
    st.caption(
        "The token opens on the notes' example, the third one written; the layer and head on "
        f"the previous step's, layer {first[0]}, head {first[1]}: a cross-attention head "
        "Whisper's makers list as following the speech. Each sub-layer has its own heads: head "
        f"{head} of the self-attention and head {head} of the cross-attention are different "
        "heads with their own weights."
    )
    return int(written), int(layer), int(head)


def role(token: str, i: int, w: Writing) -> str:
    """What token ``i`` is, in plain words, for the self-attention table."""
    if token in SPECIAL_WORDS:
        return SPECIAL_WORDS[token]
    if i == w.row:
        return "itself: the token written last"
    if i < w.row:
        return "written earlier"
    return "being written (masked)" if i == w.written else "not written yet (masked)"


def _self(w: Writing, tokens: list[str]) -> None:
    names = get_whisper().token_strings(w.token_ids)  # the vocabulary's own spelling
    top = int(np.argmax(w.self_row_k))
    n_after = len(w.token_ids) - 1 - w.row
    st.markdown(
        f"The query of {safe.token(tokens[w.row])} is compared with the keys of the "
        f"**{w.row + 1}** tokens up to and including it; softmax turns the scores into weights, "
        "and the values of those tokens, mixed by the weights, are what this head passes on. The "
        f"weights sum to **{w.self_sum:.3f}**. The **{n_after}** tokens after it, "
        f"{safe.token(tokens[w.written])} itself included, get weight exactly 0 (largest "
        f"**{w.after_max:.3f}**): when Whisper chose {safe.token(tokens[w.written])} none of "
        "them was written yet, and the mask keeps it so in this pass over the whole "
        f"transcript. The largest weight, **{w.self_row_k[top]:.3f}**, lands on "
        f"{safe.token(tokens[top])}."
    )
    st.dataframe(
        {
            "position": list(range(len(tokens))),
            "token": tokens,
            "what it is": [role(names[i], i, w) for i in range(len(tokens))],
            "weight": w.self_row_k,
        },
        key="learn_write_self",
        hide_index=True,
        width="stretch",
        column_config={"weight": THREE},
    )


def _cross(w: Writing, clip: Heard, tokens: list[str]) -> None:
    lo, hi = w.span
    peak = w.peak_frame
    st.markdown(
        f"Then the same position asks the sound. The keys and values here come from the "
        f"encoder's output: **{w.kv_shape[1]}** vectors, one per 20 ms of Whisper's 30-second "
        "window (a shorter clip is padded with silence to fill it). This head looks most at "
        f"**{peak * spectrogram.FRAME_S:.2f} s** (weight **{w.cross_row_k[peak]:.3f}** there). "
        f"Of its weight, which sums to **{w.cross_sum:.3f}**, **{w.in_sound:.3f}** lies on the "
        f"{lo * spectrogram.FRAME_S:.2f}–{hi * spectrogram.FRAME_S:.2f} s that hold the sound "
        f"and **{w.cross_sum - w.in_sound:.3f}** on the silence around it."
    )
    fig = spectrogram.spectrogram(clip.mel_ft, (lo, hi), w.cross_row_k[lo:hi], tokens[w.row])
    seconds = f"{lo * spectrogram.FRAME_S:.2f}–{hi * spectrogram.FRAME_S:.2f} s"
    chart(
        fig,
        "learn_write_cross",
        f"How to read this: the sound's spectrogram (its pitches over time) over the {seconds} "
        f"that hold it; the red line is the weight the position of {safe.token(tokens[w.row])} "
        "gives each 20 ms of it.",
    )


def _ffn(w: Writing, d_ff: int) -> None:
    s = w.sizes
    changes = {
        "the masked self-attention": s.self_attention,
        "the cross-attention": s.cross_attention,
        "the feed-forward": s.feed_forward,
    }
    largest = max(changes, key=lambda k: changes[k])
    d = w.kv_shape[2]
    st.markdown(
        "The feed-forward then works on this one vector alone, looking at no other token: "
        f"{d} numbers to {d_ff:,}, GELU, back to {d}, added to the vector. Measured on this "
        "position in this layer, as the size (length) of what each sub-layer added: the masked "
        f"self-attention **{s.self_attention:.3f}**, the cross-attention "
        f"**{s.cross_attention:.3f}**, the feed-forward **{s.feed_forward:.3f}**; the largest "
        f"change here is {largest}'s. The vector entered the layer at size "
        f"**{s.stream_in:.3f}** and leaves it at **{s.stream_out:.3f}** (sizes do not add up: "
        "the changes point in different directions)."
    )
    labels = ["vector in", "self-attention adds", "cross-attention adds", "feed-forward adds"]
    sizes = np.array([s.stream_in, *changes.values(), s.stream_out])
    chart(
        make_norm_bars(sizes, [*labels, "vector out"], y_title="size ‖·‖"),
        "learn_write_sizes",
        "How to read this: the size of the token's vector entering and leaving the layer, and "
        "between them the size of what each sub-layer added, in order.",
    )


def _next(w: Writing, last: int) -> None:
    model = get_whisper()
    top = [show_piece(t) for t in model.token_strings(w.top_ids)]
    wrote = show_piece(model.token_strings([w.written_id])[0])
    st.markdown(
        f"After block {last}, the last, the vector has size **{w.last_size:.3f}**; the final "
        f"LayerNorm rescales it to **{w.final_size:.3f}**. A linear layer turns its "
        f"{w.kv_shape[2]} numbers into **{w.n_vocab:,}** scores, one per vocabulary entry "
        "(Whisper reuses its table of token vectors here: a token's score is its vector's dot "
        "product with this one), and softmax turns the scores into probabilities. The five "
        f"most probable next tokens: {verdict(w, top, wrote)}"
    )
    st.dataframe(
        {"next token": top, "probability": w.top_p},
        key="learn_write_next",
        hide_index=True,
        column_config={"probability": THREE},
    )


def verdict(w: Writing, top: list[str], wrote: str) -> str:
    """Whether the most probable token is the one Whisper wrote, as the numbers say."""
    first = f"{safe.token(top[0])} (**{w.top_p[0]:.3f}**)"
    if w.top_ids[0] == w.written_id:
        return f"the top one, {first}, is the token Whisper wrote."
    if w.allowed_id == w.written_id:
        return (
            f"the top one, {first}, is a token Whisper's decoding rules never write here, so "
            f"it wrote the most probable one they allow, {safe.token(wrote)}."
        )
    return f"the top one is {first}; Whisper wrote {safe.token(wrote)}."


def _once(w: Writing) -> None:
    n_layers, n_frames, d = w.kv_shape
    n_text = len(w.token_ids) - w.n_prompt
    ends = " and the end token" if w.n_steps > n_text else ""
    st.markdown(
        f"The encoder ran once on this clip. From its {n_frames} vectors each of the "
        f"{n_layers} decoder layers made its cross-attention keys and values once, before the "
        f"first token was written. All **{w.n_steps}** steps of writing (the {n_text} tokens"
        f"{ends}) read those same keys and values: at each step only the decoder runs again, "
        "for the one new token."
    )
    c = st.columns(3)
    c[0].metric("encoder runs for this clip", "1")
    c[1].metric("keys (and values) per layer", f"{n_frames} × {d}")
    c[2].metric("writing steps that read them", str(w.n_steps))


def _engineers(w: Writing) -> None:
    n_layers, n_frames, d = w.kv_shape
    e = d // get_whisper().config.n_heads
    with engineers():
        st.markdown(
            "- Numbers: `attention_core.lessons.decoder_block.writing(model, "
            "heard.encoder_hidden_ltd[-1], token_ids, n_prompt, written, (layer, head), span)` "
            f"on the kept clip: `memory_of` ({n_layers} × K, V [h, {n_frames}, {e}]; recomputed "
            "here once for the display), one "
            "`decode_tokens` pass over prompt + text (causal), "
            "`models.whisper.sublayers.layer_updates` for the three updates of the layer; "
            "self row `self_pattern_lhqk[layer][head, written - 1]`, cross row "
            "`cross_pattern_lhqk[layer][head, written - 1]` [1500]; logits = `embed_vd @ "
            "hidden_ltd[-1][row]` (tied), softmax in float64; sizes are L2 norms.\n"
            "- Computed once: `transcribe` calls `encode` once and `memory_of` once; `greedy` "
            "passes that list to every `decode_tokens(model, [token], memory, past)` step, and "
            "the pass over the whole transcript that keeps the attentions reads it too. "
            "transformers keeps the same [1, 6, 1500, 64] keys in its cross-attention cache "
            "(tests/core/test_decoder_block.py)."
        )
