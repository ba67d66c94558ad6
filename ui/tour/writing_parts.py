"""The five parts of the tour's "How Whisper writes one token" step (ui/tour/writing.py), each
the words, table or chart of one stage of a decoder block for the followed token, formatted from
``attention_core.lessons.decoder_block.Writing``: masked self-attention, cross-attention over
the sound, the feed-forward's share of the change, the next token, the keys and values
computed once."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core.core.pieces import show_piece
from attention_core.lessons.decoder_block import Writing
from ui import glossary, safe
from ui.cache import get_whisper
from ui.listen.cache import Heard
from ui.tour.common import THREE, chart
from viz import spectrogram
from viz.norm_bars import make_norm_bars


def self_part(w: Writing, tokens: list[str]) -> None:
    names = get_whisper().token_strings(w.token_ids)  # the vocabulary's own spelling
    top = int(np.argmax(w.self_row_k))
    n_after = len(w.token_ids) - 1 - w.row
    glossary.say(
        f"The query of {safe.token(tokens[w.row])} is compared with the keys of the "
        f"**{w.row + 1}** tokens up to and including it; softmax turns the scores into weights, "
        "and the values of those tokens, mixed by the weights, are what this head passes on. The "
        f"weights sum to **{w.self_sum:.3f}**. The **{n_after}** tokens after it, "
        f"{safe.token(tokens[w.written])} itself included, get weight exactly 0 (largest "
        f"**{w.after_max:.3f}**): when Whisper chose {safe.token(tokens[w.written])} none of "
        "them was written yet, and the mask keeps it so here, where the decoder runs over the "
        f"whole transcript at once. The largest weight, **{w.self_row_k[top]:.3f}**, lands on "
        f"{safe.token(tokens[top])}."
    )
    st.dataframe(
        {
            "position": list(range(len(tokens))),
            "token": tokens,
            "what it is": [w.role(i, names[i]) for i in range(len(tokens))],
            "weight": w.self_row_k,
        },
        key="learn_write_self",
        hide_index=True,
        width="stretch",
        column_config={"weight": THREE},
    )


def cross_part(w: Writing, clip: Heard, tokens: list[str]) -> None:
    lo, hi = w.span
    peak = w.peak_frame
    glossary.say(
        f"Then the same position asks the sound. The keys and values here come from the "
        f"encoder's output: **{w.kv_shape[1]}** vectors, one per 20 ms of Whisper's 30-second "
        "window (a shorter clip is padded with silence to fill it). This head looks most at "
        f"**{peak * spectrogram.FRAME_S:.2f} s** (weight **{w.cross_row_k[peak]:.3f}** there). "
        f"Of its weight, which sums to **{w.cross_sum:.3f}**, **{w.in_sound:.3f}** lies on the "
        f"{lo * spectrogram.FRAME_S:.2f}–{hi * spectrogram.FRAME_S:.2f} s that hold the sound "
        f"and **{w.cross_sum - w.in_sound:.3f}** on the rest of the 30-second window (any "
        "silence around the speech, and the padding)."
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


def ffn_part(w: Writing, d_ff: int) -> None:
    s = w.sizes
    changes = {
        "the masked self-attention": s.self_attention,
        "the cross-attention": s.cross_attention,
        "the feed-forward": s.feed_forward,
    }
    largest = max(changes, key=lambda k: changes[k])
    d = w.kv_shape[2]
    glossary.say(
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


def next_part(w: Writing, last: int) -> None:
    model = get_whisper()
    top = [show_piece(t) for t in model.token_strings(w.top_ids)]
    wrote = show_piece(model.token_strings([w.written_id])[0])
    glossary.say(
        f"After block {last}, the last, the vector has size **{w.last_size:.3f}**; the final "
        f"LayerNorm rescales it to **{w.final_size:.3f}**. A linear layer turns its "
        f"{w.kv_shape[2]} numbers into **{w.n_vocab:,}** scores, one per vocabulary entry "
        "(Whisper reuses its table of token vectors here: a token's score is its vector's dot "
        "product with this one), and softmax turns the scores into probabilities. The five "
        f"most probable next tokens: {verdict(w, top, wrote)}"
    )
    n_vocab = f"{w.n_vocab:,}".replace(",", "{,}")  # a comma in LaTeX is spaced as a list's
    st.latex(
        rf"p = \mathrm{{softmax}}\big(E\,\mathrm{{LN}}(x)\big),\quad E:\ {n_vocab}"
        rf"\text{{ token vectors of }} {w.kv_shape[2]} \text{{ numbers}}"
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


def once_part(w: Writing) -> None:
    n_layers, n_frames, d = w.kv_shape
    n_text = len(w.token_ids) - w.n_prompt
    ends = " and the end token" if w.n_steps > n_text else ""
    glossary.say(
        f"The encoder ran once on this clip. From its {n_frames} vectors each of the "
        f"{n_layers} decoder layers made its cross-attention keys and values once, before the "
        f"first token was written. All **{w.n_steps}** steps of writing (the {n_text} tokens"
        f"{ends}) read those same keys and values: at each step only the decoder runs again, "
        "for the one new token."
    )
    c = st.columns(3)
    glossary.metric("encoder runs for this clip", "1", where=c[0])
    glossary.metric("keys (and values) per layer", f"{n_frames} × {d}", where=c[1])
    glossary.metric("writing steps that read them", str(w.n_steps), where=c[2])
