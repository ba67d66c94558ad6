"""Step: how Whisper writes one token. One block of Whisper's decoder in order, as the notes
teach the encoder-decoder: masked self-attention over the tokens written so far, cross-attention
to the encoder's output, the feed-forward; then the final LayerNorm, the linear layer to the
vocabulary and softmax; the cross-attention's keys and values computed once per clip; and where
attention came from. Every number is ``attention_core.lessons.decoder_block.writing``'s."""

from __future__ import annotations

import streamlit as st

from attention_core.core.family import Trace
from attention_core.core.pieces import show_piece
from attention_core.lessons.decoder_block import SPECIAL_WORDS, Writing, writing
from ui import glossary, safe
from ui.cache import get_whisper, whisper_error
from ui.listen.cache import Heard
from ui.router import Shared
from ui.state.tour import TOUR, Tour
from ui.tour.common import engineers
from ui.tour.decoder import cross_head, example_clip
from ui.tour.writing_parts import cross_part, ffn_part, next_part, once_part, self_part

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
        glossary.box(
            f"Whisper could not be loaded, so this step is not shown. {error}", kind="warning"
        )
        return
    n_layers, n_heads = get_whisper().config.n_layers, get_whisper().config.n_heads
    glossary.say(INTRO.format(n=n_layers))
    st.latex(
        r"x \leftarrow x + \mathrm{MaskedSelfAttn}(\mathrm{LN}(x));\ "
        r"x \leftarrow x + \mathrm{CrossAttn}(\mathrm{LN}(x),\ \text{sound});\ "
        r"x \leftarrow x + \mathrm{FFN}(\mathrm{LN}(x))"
    )
    glossary.note(
        "One block: each of its three sub-layers adds its update to the token's vector x. Whisper "
        "puts a LayerNorm (LN) at the start of each sub-layer; MiniLM, in the encoder block "
        "step, puts it after."
    )
    clip = example_clip()
    written, layer, head = _choices(clip, n_layers, n_heads)
    w = followed(clip.key, clip, written, layer, head)
    tokens = [show_piece(t) for t in clip.tokens]
    given = " and ".join(
        f"{safe.token(tokens[i])} ({SPECIAL_WORDS.get(clip.tokens[i], 'a prompt token')})"
        for i in range(clip.n_prompt)
    )
    glossary.say(
        f"Whisper writes after {clip.n_prompt} tokens it is given, not ones it wrote: {given}. "
        f"To write {safe.token(tokens[w.written])}, it works at the position just before it, "
        f"{safe.token(tokens[w.row])}, the last token so far: that position's vector asks the "
        "questions (the query) in both attentions, and what comes out at the end predicts the "
        "next token."
    )
    glossary.heading(f"1. Masked self-attention (layer {layer}, head {head})", level="subheader")
    self_part(w, tokens)
    glossary.heading(
        f"2. Cross-attention to the sound (layer {layer}, head {head})", level="subheader"
    )
    cross_part(w, clip, tokens)
    glossary.heading(f"3. The feed-forward (layer {layer})", level="subheader")
    ffn_part(w, get_whisper().config.d_ff)
    glossary.heading("4. After the last block: the next token", level="subheader")
    next_part(w, n_layers - 1)
    glossary.heading("5. Computed once: the encoder's keys and values", level="subheader")
    once_part(w)
    glossary.box(HISTORY, icon=":material/history_edu:")
    _engineers(w)


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
    glossary.note(
        "The token opens on the notes' example, the third one written; the layer and head on "
        f"the previous step's, layer {first[0]}, head {first[1]}: a cross-attention head "
        "Whisper's makers list as following the speech. Each sub-layer has its own heads: head "
        f"{head} of the self-attention and head {head} of the cross-attention are different "
        "heads with their own weights."
    )
    return int(written), int(layer), int(head)


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
