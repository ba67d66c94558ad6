"""attention_core.methods.alignment against SciPy (Spearman's rho, entropy), on made-up patterns
whose scores are known, and on Whisper tiny.en's cross-attention over the shipped clips."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import entropy, spearmanr

from attention_core import load_whisper, log_mel, transcribe
from attention_core.methods.alignment import (
    concentration,
    head_alignment,
    peak_frames,
    ranks,
    spearman,
)
from attention_core.models.whisper.audio import load_audio, speech_frames

CLIPS = Path(__file__).resolve().parents[2] / "examples" / "clips"


def test_spearman_equals_scipy_with_and_without_ties():
    rng = np.random.default_rng(0)
    for _ in range(20):
        a = rng.integers(0, 6, size=12)  # many ties
        b = rng.normal(size=12)
        assert spearman(a, b) == pytest.approx(spearmanr(a, b).statistic, abs=1e-12)
        assert spearman(np.arange(12), a) == pytest.approx(
            spearmanr(np.arange(12), a).statistic, abs=1e-12
        )
    np.testing.assert_array_equal(ranks([3, 1, 3, 2]), [2.5, 0.0, 2.5, 1.0])


def test_spearman_edges():
    assert np.isnan(spearman([1.0], [2.0]))  # one token: no order to speak of
    assert spearman([0, 1, 2], [5, 5, 5]) == 0.0  # every token on the same frame
    assert spearman([0, 1, 2], [1, 7, 9]) == 1.0
    assert spearman([0, 1, 2], [9, 7, 1]) == -1.0


def test_concentration_equals_one_minus_scipy_entropy_over_log_frames():
    rng = np.random.default_rng(1)
    rows = rng.random((5, 40)) ** 4
    expected = np.mean([1 - entropy(r) / np.log(40) for r in rows])  # scipy normalises rows
    assert concentration(rows) == pytest.approx(expected, abs=1e-12)
    assert concentration(np.eye(4)) == pytest.approx(1.0)
    assert concentration(np.ones((3, 7))) == pytest.approx(0.0, abs=1e-12)
    assert np.isnan(concentration(np.ones((0, 7))))


def test_a_diagonal_head_scores_one_and_a_backward_head_minus_one():
    n_tokens, n_frames = 6, 30
    cross = np.full((1, 2, n_tokens, n_frames), 1e-3)
    for t in range(n_tokens):
        cross[0, 0, t, 5 + 3 * t] = 1.0  # forward in time
        cross[0, 1, t, 25 - 3 * t] = 1.0  # backward
    cross /= cross.sum(-1, keepdims=True)
    al = head_alignment(cross, (0, n_tokens), (0, n_frames))
    np.testing.assert_allclose(al.monotone_lh, [[1.0, -1.0]])
    np.testing.assert_array_equal(al.peak_lhq[0, 0], 5 + 3 * np.arange(n_tokens))
    assert al.concentrated_lh[0, 0] > 0.9
    # a span that leaves the forward peaks out: the peaks are searched inside it only
    assert peak_frames(cross[0, 0], (20, 30)).min() >= 20
    with pytest.raises(ValueError, match="span"):
        head_alignment(cross, (0, n_tokens), (10, 10))


@pytest.fixture(scope="module")
def whisper():
    return load_whisper()


@pytest.mark.parametrize("clip", sorted(p.stem for p in CLIPS.glob("*.wav")))
def test_on_the_clips_an_alignment_head_follows_the_speech(whisper, clip):
    audio = load_audio(CLIPS / f"{clip}.wav")
    trace = transcribe(whisper, log_mel(audio.samples_n))
    rows = (len(trace.prompt_ids) - 1, len(trace.token_ids) - 1)  # the rows that wrote the text
    span = speech_frames(audio.samples_n)
    al = head_alignment(trace.cross_pattern_lhqk, rows, span)
    assert al.monotone_lh.shape == al.concentrated_lh.shape == (4, 6)
    assert (3, 0) in trace.alignment_heads  # the head the Listen page opens on
    assert al.monotone_lh[3, 0] > 0.95 and al.concentrated_lh[3, 0] > 0.25
    named = np.mean([al.monotone_lh[h] for h in trace.alignment_heads])
    assert named > np.mean(al.monotone_lh[0])  # the named heads follow time; layer 0 hardly
    for layer, head in [(0, 0), (2, 5), (3, 4)]:  # the peaks are the rows' argmax in the span
        part = trace.cross_pattern_lhqk[layer, head, rows[0] : rows[1], span[0] : span[1]]
        np.testing.assert_array_equal(al.peak_lhq[layer, head], part.argmax(-1) + span[0])
