"""The tour's "How Whisper writes one token" step against the engine: the rendered numbers (the
masked self-attention row, the cross-attention row over the sound, each sub-layer's update, the
sizes around the final LayerNorm, the top five next tokens, the steps that read the keys and
values) equal the engine's on the shipped clip, for the opening choice and for others; its
claims in words hold on those numbers. tests/core/test_decoder_block.py checks the engine's
numbers against transformers' Whisper."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import load_whisper, log_mel, transcribe
from attention_core.core.pieces import show_piece
from attention_core.lessons.decoder_block import SPECIAL_WORDS, writing
from attention_core.models.whisper.audio import load_audio, speech_frames
from tests.app.conftest import engineers_text, learner_texts, open_page
from tests.figdata import array, spec
from ui import safe, tour
from ui.presets import CLIPS

STEP = tour.ORDER.index("writing") + 1
SENTENCE = "The river bank was muddy"


@pytest.fixture(scope="module")
def whisper():
    return load_whisper()


def _engine(whisper, clip: str, written: int | None, where: tuple[int, int]):
    """The engine's trace of the clip and the step's numbers (the notes' third token when
    ``written`` is None)."""
    audio = load_audio(CLIPS / f"{clip}.wav")
    trace = transcribe(whisper, log_mel(audio.samples_n))
    if written is None:
        written = trace.n_prompt + 2
    span = speech_frames(audio.samples_n)
    args = (trace.token_ids, trace.n_prompt, written, where, span)
    return trace, writing(whisper, trace.encoder_hidden_ltd[-1], *args)


def _open(clip=None, written=None, where=None):
    at = open_page("learn", s=SENTENCE, step=str(STEP))
    assert not at.exception, [e.value for e in at.exception]
    if clip is not None:
        at.selectbox(key="learn_clip").select(clip).run()
    if written is not None:
        at.selectbox(key="learn_written").select(written).run()
    if where is not None:
        at.selectbox(key="learn_block_layer").select(where[0]).run()
        at.selectbox(key="learn_block_head").select(where[1]).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _words(at) -> str:
    return " ".join(m.value for m in (*at.markdown, *at.caption, *at.info))


def _chart(at, key: str) -> dict:
    [chart] = [c for c in at.get("plotly_chart") if c.proto.id.endswith(key)]
    return spec(chart)


def test_the_step_follows_the_decoder_step_and_links_to_listen():
    assert tour.ORDER[tour.ORDER.index("decoder") + 1] == "writing" and tour.N_STEPS == 15
    at = _open()
    assert at.header[0].value == f"{STEP}. How Whisper writes one token"
    links = [link.proto for link in at.get("page_link")]
    assert any(link.page == "listen" for link in links)
    assert at.selectbox(key="learn_clip").value == "river"
    assert (
        at.selectbox(key="learn_block_layer").value,
        at.selectbox(key="learn_block_head").value,
    ) == (3, 0)


CHOICES = [  # (clip, written token, (layer, head)); None: the step's opening choice
    ("river", None, None),
    ("fluffy", 5, (0, 5)),
    ("river", 10, (1, 2)),  # the last text token "."
]


@pytest.mark.parametrize(("clip", "written", "where"), CHOICES)
def test_every_number_on_the_step_is_the_engines(whisper, clip, written, where):
    at = _open(None if clip == "river" else clip, written, where)
    trace, w = _engine(whisper, clip, written, where or (3, 0))
    tokens = [show_piece(t) for t in trace.tokens]
    text = _words(at)
    _self_attention(at, text, trace, w, tokens)
    _cross_attention(at, text, w)
    _sizes(at, text, w)
    _next_token(at, text, whisper, w)
    _computed_once(at, text, trace, w)


def _self_attention(at, text, trace, w, tokens):
    table = at.dataframe[0].value
    assert list(table["token"]) == tokens
    row = w.row
    np.testing.assert_allclose(
        table["weight"], trace.self_pattern_lhqk[w.layer, w.head, row], atol=1e-6
    )
    names = trace.tokens
    assert [table["what it is"][i] for i in range(trace.n_prompt)] == [
        SPECIAL_WORDS[n] for n in names[: trace.n_prompt]
    ]
    assert table["what it is"][row] == "itself: the token written last"
    assert table["what it is"][w.written] == "being written (masked)"
    # "exactly 0" after it, "sum to 1": on the table's own numbers
    assert np.all(table["weight"][row + 1 :] == 0)
    assert abs(float(table["weight"].sum()) - 1) <= 1e-6
    n_after = len(tokens) - 1 - row
    assert f"keys of the **{row + 1}** tokens up to and including it" in text
    assert f"The **{n_after}** tokens after it" in text and "exactly 0" in text
    assert f"sum to **{w.self_sum:.3f}**" in text and f"**{w.self_sum:.3f}**" == "**1.000**"
    top = int(np.argmax(w.self_row_k))
    assert (
        f"The largest weight, **{w.self_row_k[top]:.3f}**, lands on {safe.token(tokens[top])}"
        in text
    )
    before = f"it works at the position just before it, {safe.token(tokens[row])}"
    assert f"To write {safe.token(tokens[w.written])}, {before}" in text
    given = [f"{safe.token(tokens[i])} ({SPECIAL_WORDS[names[i]]})" for i in range(2)]
    assert (
        f"Whisper writes after 2 tokens it is given, not ones it wrote: {' and '.join(given)}."
        in text
    )
    assert "<|startoftranscript|>" in names[0] and "start token" in SPECIAL_WORDS[names[0]]


def _cross_attention(at, text, w):
    lo, hi = w.span
    peak = w.peak_frame
    assert (
        f"looks most at **{peak * 0.02:.2f} s** (weight **{w.cross_row_k[peak]:.3f}** there)"
        in text
    )
    assert f"**{w.in_sound:.3f}** lies on the {lo * 0.02:.2f}–{hi * 0.02:.2f} s" in text
    assert f"**{w.cross_sum - w.in_sound:.3f}** on the rest of the 30-second window" in text
    assert f"which sums to **{w.cross_sum:.3f}**" in text and abs(w.cross_sum - 1) <= 1e-6
    assert "**1500** vectors, one per 20 ms" in text
    fig = _chart(at, "learn_write_cross")
    line = fig["data"][1]
    np.testing.assert_allclose(array(line["y"]), w.cross_row_k[lo:hi], atol=1e-7)
    assert array(line["x"])[0] == pytest.approx(lo * 0.02)


def _sizes(at, text, w):
    s = w.sizes
    changes = {
        "the masked self-attention": s.self_attention,
        "the cross-attention": s.cross_attention,
        "the feed-forward": s.feed_forward,
    }
    for name, size in changes.items():
        assert f"{name} **{size:.3f}**" in text
    largest = max(changes, key=lambda k: changes[k])
    assert f"the largest change here is {largest}'s" in text
    assert (
        f"entered the layer at size **{s.stream_in:.3f}** and leaves it at **{s.stream_out:.3f}**"
        in text
    )
    bars = array(_chart(at, "learn_write_sizes")["data"][0]["y"])
    want = [s.stream_in, s.self_attention, s.cross_attention, s.feed_forward, s.stream_out]
    np.testing.assert_allclose(bars, want, rtol=1e-6)


def _next_token(at, text, whisper, w):
    assert f"the vector has size **{w.last_size:.3f}**" in text
    assert f"rescales it to **{w.final_size:.3f}**" in text
    assert f"into **{w.n_vocab:,}** scores" in text and w.n_vocab == whisper.config.vocab_size
    table = at.dataframe[1].value
    top = [show_piece(t) for t in whisper.token_strings(w.top_ids)]
    assert list(table["next token"]) == top
    np.testing.assert_allclose(table["probability"], w.top_p, atol=1e-7)
    # the claim holds on the numbers: the top one is the token written after the row
    assert w.top_ids[0] == w.written_id
    assert (
        f"the top one, {safe.token(top[0])} (**{w.top_p[0]:.3f}**), is the token Whisper wrote."
        in text
    )


def _computed_once(at, text, trace, w):
    n_text = len(trace.text_ids)
    assert w.n_steps == n_text + 1  # every shipped clip ends with the end token
    assert f"All **{w.n_steps}** steps of writing (the {n_text} tokens and the end token)" in text
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {
        "encoder runs for this clip": "1",
        "keys (and values) per layer": "1500 × 384",
        "writing steps that read them": str(w.n_steps),
    }


def test_history_is_short_and_named_and_engineers_words_stay_closed():
    at = _open()
    [history] = [i.value for i in at.info if "Where attention came from" in i.value]
    assert "Bahdanau" in history and "2014" in history and "2017" in history
    assert "RNN" in history and 3 <= history.count(". ") + 1 <= 6
    learner = " ".join(learner_texts(at.main))
    assert "memory_of" not in learner and "hidden_ltd" not in learner
    assert "memory_of" in engineers_text(at) and "layer_updates" in engineers_text(at)
