"""attention_core.models.whisper.mel against transformers' WhisperFeatureExtractor(feature_size=80).

The extractor has two paths: NumPy in float64 (used when torch is absent) and torch's float32 STFT
(used here, since torch is installed). log_mel computes in float64, so it equals the NumPy path to
1e-5 everywhere; against the torch path the float32 rounding shows only in the quietest cells (the
last two of the eight decades kept below the loudest value), so there the bound is 1e-4.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import transformers.models.whisper.feature_extraction_whisper as fe_module
from transformers import WhisperFeatureExtractor
from transformers.audio_utils import hertz_to_mel as hf_hertz_to_mel

from attention_core.models.whisper.mel import (
    N_FRAMES,
    N_MELS,
    N_SAMPLES,
    hertz_to_mel,
    log_mel,
    mel_filters,
    mel_to_hertz,
)

CLIPS = Path(__file__).resolve().parents[2] / "examples" / "clips"


def _inputs() -> dict[str, np.ndarray]:
    """Every shipped clip, random noise, silence, exactly 30 s and 40 s (cut to 30 s)."""
    rng = np.random.default_rng(22)
    inputs = {p.name: sf.read(p, dtype="float32")[0] for p in sorted(CLIPS.glob("*.wav"))}
    inputs["noise"] = (0.1 * rng.standard_normal(5 * 16_000)).astype(np.float32)
    inputs["silence"] = np.zeros(16_000, dtype=np.float32)
    inputs["30 s"] = (0.3 * rng.standard_normal(N_SAMPLES)).astype(np.float32)
    t = np.arange(40 * 16_000)
    tone = 0.5 * np.sin(0.05 * t) * (1 + np.sin(t / 8000)) / 2
    inputs["40 s"] = (tone + 0.01 * rng.standard_normal(t.size)).astype(np.float32)
    inputs["one sample"] = np.array([0.25], dtype=np.float32)
    return inputs


INPUTS = _inputs()


@pytest.fixture(scope="module")
def extractor() -> WhisperFeatureExtractor:
    return WhisperFeatureExtractor(feature_size=80)


def _extract(extractor: WhisperFeatureExtractor, samples: np.ndarray) -> np.ndarray:
    out = extractor(samples, sampling_rate=16_000, return_tensors="np").input_features[0]
    return np.asarray(out)


def test_filters_are_the_extractors(extractor):
    ours = mel_filters()
    assert ours.shape == (201, N_MELS) == extractor.mel_filters.shape
    np.testing.assert_allclose(ours, extractor.mel_filters, rtol=0, atol=1e-12)


def test_slaney_scale_matches_and_inverts():
    hertz = np.array([0.0, 100.0, 999.0, 1000.0, 1001.0, 4000.0, 8000.0])
    np.testing.assert_allclose(hertz_to_mel(hertz.copy()), hf_hertz_to_mel(hertz.copy(), "slaney"))
    np.testing.assert_allclose(mel_to_hertz(hertz_to_mel(hertz.copy())), hertz, atol=1e-9)


@pytest.mark.parametrize("name", list(INPUTS))
def test_log_mel_equals_the_extractors_numpy_path(extractor, monkeypatch, name):
    monkeypatch.setattr(fe_module, "is_torch_available", lambda: False)
    ours = log_mel(INPUTS[name])
    assert ours.shape == (N_MELS, N_FRAMES) and ours.dtype == np.float32
    np.testing.assert_allclose(ours, _extract(extractor, INPUTS[name]), rtol=0, atol=1e-5)


@pytest.mark.parametrize("name", list(INPUTS))
def test_log_mel_near_the_extractors_torch_path(extractor, name):
    ours, theirs = log_mel(INPUTS[name]), _extract(extractor, INPUTS[name])
    error = np.abs(ours - theirs)
    loud = ours >= ours.max() - 6.0 / 4  # within six decades of the loudest cell
    assert error[loud].max() <= 1e-5
    assert error.max() <= 1e-4


def test_longer_input_is_cut_and_shorter_padded():
    long = INPUTS["40 s"]
    np.testing.assert_array_equal(log_mel(long), log_mel(long[:N_SAMPLES]))
    short = INPUTS["noise"]
    padded = np.zeros(N_SAMPLES, dtype=np.float32)
    padded[: short.size] = short
    np.testing.assert_array_equal(log_mel(short), log_mel(padded))


def test_floor_is_eight_decades_below_the_loudest():
    ours = log_mel(INPUTS["river.wav"])
    assert ours.min() == pytest.approx(ours.max() - 2.0, abs=1e-6)  # (x + 4) / 4 of max - 8
