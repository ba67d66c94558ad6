"""The tour's "Decoder and cross-attention" step against the engines: SmolLM2's masked
self-attention on the tour's sentence (the previous-token head), Whisper tiny.en's
cross-attention on a shipped clip (an alignment head), and nothing borrowed or illustrative."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import load_whisper, log_mel, trace_sentence, transcribe
from attention_core.core.pieces import show_piece
from attention_core.methods.alignment import head_alignment
from attention_core.methods.roles import RULE
from attention_core.models.whisper.audio import load_audio, speech_frames
from tests.app.conftest import open_page
from tests.figdata import array, spec
from tests.roles_reference import reference_scores
from ui import tour
from ui.presets import CLIPS

STEP = tour.ORDER.index("decoder") + 1
SENTENCE = "the cat saw the dog near the bank"


@pytest.fixture(scope="module")
def whisper():
    return load_whisper()


def _open(clip: str | None = None, s: str = SENTENCE):
    at = open_page("learn", s=s, step=str(STEP))
    assert not at.exception, [e.value for e in at.exception]
    if clip is not None:
        at.selectbox(key="learn_clip").select(clip).run()
        assert not at.exception, [e.value for e in at.exception]
    return at


def _chart(at, key: str):
    [chart] = [c for c in at.get("plotly_chart") if c.proto.id.endswith(key)]
    return spec(chart)


def _words(at) -> str:
    """Every text on the step, the closed expander's included."""
    parts = [m.value for m in (*at.markdown, *at.caption, *at.info, *at.warning)]
    parts += [m.label for m in at.metric] + [at.header[0].value]
    return " ".join(parts)


def test_the_step_links_to_the_listen_page():
    assert tour.step(STEP).TITLE == "Decoder and cross-attention"
    at = _open()
    links = [link.proto for link in at.get("page_link")]
    assert any(link.page == "listen" and "record your own voice" in link.label for link in links)


@pytest.mark.parametrize("text", [SENTENCE, "The river bank was muddy"])
def test_masked_self_attention_is_smollm2s_previous_token_head(smollm2, text):
    at = _open(s=text)
    trace = trace_sentence(smollm2, text)
    # TransformerLens's previous-token score on transformers' attentions (tests/roles_reference)
    share_lh = reference_scores("smollm2", text)["previous_token"]
    layer, head = np.unravel_index(int(np.argmax(share_lh)), share_lh.shape)
    fig = _chart(at, "learn_dec_self")
    assert fig["layout"]["title"]["text"] == f"SmolLM2, layer {layer}, head {head}"
    z = array(fig["data"][0]["z"])
    expected = np.asarray(trace.pattern_lhqk[layer][head])
    np.testing.assert_allclose(z, expected, atol=1e-6)
    assert np.all(z[np.triu_indices(len(z), 1)] == 0)
    assert [m.value for m in at.metric] == ["0.000", f"{share_lh[layer, head]:.3f}"]
    assert f"**layer {layer}, head {head}**" in _words(at) and "270" in _words(at)
    # The job's name only where the rule gives it: an even spread's share is (n-1)/n / Σ 1/i
    n = trace.n_tokens
    even = sum(1 / (i + 1) for i in range(1, n)) / n
    named = share_lh[layer, head] >= even + RULE.margin
    said = "enough for the rule to call it a **previous-token head**" in _words(at)
    assert said == named
    if not named:
        assert "not enough for the rule to call it a previous-token head" in _words(at)


@pytest.mark.parametrize("clip", [None, "fluffy"])
def test_cross_attention_is_whispers_on_the_clip(whisper, clip):
    at = _open(clip)
    audio = load_audio(CLIPS / f"{clip or 'river'}.wav")
    trace = transcribe(whisper, log_mel(audio.samples_n))
    lo, hi = speech_frames(audio.samples_n)
    n_prompt = len(trace.prompt_ids)
    assert (3, 0) in trace.alignment_heads  # the head shown is one the makers name
    fig = _chart(at, "learn_dec_cross")
    assert fig["layout"]["title"]["text"].startswith("Whisper, cross-attention of layer 3, head 0")
    z = array(fig["data"][0]["z"])
    written_by = slice(n_prompt - 1, len(trace.token_ids) - 1)  # row r reads r, writes r + 1
    np.testing.assert_allclose(z, trace.cross_pattern_lhqk[3, 0, written_by, lo:hi], atol=1e-6)
    assert fig["data"][0]["x"][0] == round(lo * 0.02, 3) and len(fig["data"][0]["x"]) == hi - lo
    words = [show_piece(t) for t in trace.tokens[n_prompt:]]
    table = at.dataframe[0].value
    assert list(table["written token"]) == words
    rows = (written_by.start, written_by.stop)
    peaks = head_alignment(trace.cross_pattern_lhqk, rows, (lo, hi))
    peak_q = peaks.peak_lhq[3, 0]
    np.testing.assert_allclose(table["looks most at (s)"], np.round(peak_q * 0.02, 2))
    rows_qk = trace.cross_pattern_lhqk[3, 0, written_by]
    np.testing.assert_allclose(table["weight"], rows_qk[np.arange(len(peak_q)), peak_q], atol=1e-6)
    text = _words(at)
    assert trace.text.rstrip(".") in text.replace("\\", "")
    assert f"rank correlation **{peaks.monotone_lh[3, 0]:.3f}**" in text
    # the heads that move forward though the makers did not pick them, counted (issue 35)
    listed = set(trace.alignment_heads)
    others = sum(
        1
        for (layer, head), rho in np.ndenumerate(peaks.monotone_lh)
        if (layer, head) not in listed and rho >= 0.5
    )
    assert f"on this clip {others} of the other {24 - len(listed)} move forward too" in text
    # the cut silence's share of the weight is said (issue 35), from the engine's rows
    outside = 1 - float(rows_qk[:, lo:hi].sum(-1, dtype=np.float64).mean())
    captions = " ".join(c.value for c in at.caption)
    assert f"is cut off and holds {outside:.0%} of a row's weight on " in captions


def test_nothing_is_borrowed_and_the_translation_note_is_plain():
    text = _words(_open()).lower()
    assert "illustrative" not in text and "borrow" not in text and "demonstration" not in text
    assert "no translation model ships" in text
    # The notes teach "Jane visits Africa" as self-attention, not translation (issue 35)
    assert "jane visits africa" not in text
    # A decoder-only model has no cross-attention; a decoder's attention does not "differ in
    # two ways" (issue 35)
    assert "two ways" not in text and "decoder-only model such as smollm2" in text
    # Following the speech is a property of some heads, not of cross-attention (issue 35)
    assert "so each word looks near the moment it was said" not in text
    assert "of its 24 cross-attention heads to time words by" in text
    assert "queries come from the written words" in text
    assert "keys and values from the audio" in text


def test_both_formulas_carry_the_models_head_size():
    latex = [x.value for x in _open().latex]
    assert len(latex) == 2 and all(r"\sqrt{64}" in x for x in latex)  # 576 / 9 and 384 / 6
    assert r"-\infty" in latex[0] and r"K_{\text{audio}}" in latex[1]
