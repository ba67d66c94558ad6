"""The references Whisper is checked against, each loaded once per test process. The reference
code itself is the app's verify button's (references/whisper.py), written once; here it is bound to
the packaged model, with what only the tests need (clips, transformers' log-mel).

- CTranslate2 itself (``models.Whisper(folder, device="cpu", compute_type="float32")``): its
  ``encode`` gives the encoder's output, ``generate(..., beam_size=1)`` the greedy tokens.
- transformers' ``WhisperForConditionalGeneration`` with model.bin's weights mapped in (config
  from the engine's, built from config.json and the weights' shapes), eager attention, for every
  attention pattern (``output_attentions``).
- transformers' ``WhisperFeatureExtractor(feature_size=80)`` for the log-mel input, and clips:
  the shipped ones in examples/clips/ and espeak-ng's (another voice, another speed).
"""

from __future__ import annotations

import shutil
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from attention_core.models.whisper.model import WhisperModel, load_whisper
from references import whisper as reference
from references.whisper import mapped_state

__all__ = ["mapped_state"]

CLIPS = Path(__file__).resolve().parents[2] / "examples" / "clips"
SHIPPED = ("river.wav", "fluffy.wav", "plumbing.wav")  # silence around; 140 wpm; 160 wpm
SPOKEN = ("en-gb", 175, "Seven silver spoons were left on the kitchen table.")


@lru_cache(maxsize=1)
def engine() -> WhisperModel:
    return load_whisper()


def ct2_model() -> Any:
    return reference.ct2_whisper(str(engine().path))


def ct2_encode(mel_ft: np.ndarray) -> np.ndarray:
    """CTranslate2's encoder output [1500, 384] for one log-mel input."""
    return reference.ct2_encode(engine(), mel_ft)


def ct2_tokens(mel_ft: np.ndarray, max_length: int = 448) -> list[int]:
    """CTranslate2's greedy text tokens from <|startoftranscript|><|notimestamps|>."""
    return reference.ct2_tokens(engine(), mel_ft, max_length)


def read_clip(path: Path) -> np.ndarray:
    """A WAV as float32 mono at 16 kHz."""
    import soundfile as sf
    import soxr

    samples, rate = sf.read(str(path), dtype="float32", always_2d=True)
    mono = samples.mean(axis=1)
    return mono if rate == 16_000 else soxr.resample(mono, rate, 16_000).astype(np.float32)


def log_mel(samples: np.ndarray) -> np.ndarray:
    """transformers' log-mel [80, 3000] of 16 kHz samples."""
    from transformers import WhisperFeatureExtractor

    extractor = WhisperFeatureExtractor(feature_size=80)
    out = extractor(samples, sampling_rate=16_000, return_tensors="np").input_features[0]
    return np.ascontiguousarray(out, dtype=np.float32)


def spoken_clip(folder: Path) -> Path | None:
    """espeak-ng's WAV of ``SPOKEN`` in ``folder`` (None when espeak-ng is not installed)."""
    exe = shutil.which("espeak-ng")
    if exe is None:
        return None
    voice, speed, text = SPOKEN
    path = folder / "spoken.wav"
    subprocess.run([exe, "-v", voice, "-s", str(speed), "-w", str(path), text], check=True)
    return path


def hf_model() -> Any:
    """transformers' Whisper with model.bin's weights, eager attention, float32."""
    return reference.hf_whisper(engine())


def hf_attentions(mel_ft: np.ndarray, token_ids: tuple[int, ...]) -> Any:
    """transformers' outputs (encoder, decoder and cross attentions, hidden states) for the
    clip's log-mel and the decoder input ``token_ids``."""
    return reference.hf_outputs(engine(), mel_ft, token_ids)
