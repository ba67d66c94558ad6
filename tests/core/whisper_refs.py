"""The references Whisper is checked against, each loaded once per test process.

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

from attention_core.models.whisper import WhisperModel, load_whisper, whisper_folder

CLIPS = Path(__file__).resolve().parents[2] / "examples" / "clips"
SHIPPED = ("river.wav", "fluffy.wav", "plumbing.wav")  # silence around; 140 wpm; 160 wpm
SPOKEN = ("en-gb", 175, "Seven silver spoons were left on the kitchen table.")


@lru_cache(maxsize=1)
def engine() -> WhisperModel:
    return load_whisper()


@lru_cache(maxsize=1)
def ct2_model() -> Any:
    import ctranslate2

    return ctranslate2.models.Whisper(
        str(whisper_folder()), device="cpu", compute_type="float32", intra_threads=1
    )


def ct2_encode(mel_ft: np.ndarray) -> np.ndarray:
    """CTranslate2's encoder output [1500, 384] for one log-mel input."""
    import ctranslate2

    out = ct2_model().encode(ctranslate2.StorageView.from_array(mel_ft[None]))
    return np.array(out)[0]


def ct2_tokens(mel_ft: np.ndarray, max_length: int = 448) -> list[int]:
    """CTranslate2's greedy text tokens from <|startoftranscript|><|notimestamps|>."""
    import ctranslate2

    features = ctranslate2.StorageView.from_array(np.ascontiguousarray(mel_ft[None]))
    result = ct2_model().generate(features, [[50257, 50362]], beam_size=1, max_length=max_length)
    return [int(i) for i in result[0].sequences_ids[0]]


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


def _attn(prefix: str, w: Any, d: int, cross: bool) -> dict[str, np.ndarray]:
    """One attention's weights in transformers' names (q, k, v split from the fused rows)."""
    w_in, b_in = w.w_in_nd, w.b_in_n
    names = {}
    for i, kind in enumerate(("q", "k", "v")):
        names[f"{prefix}.{kind}_proj.weight"] = w_in[i * d : (i + 1) * d]
        if kind != "k":  # Whisper's key projection has no bias (CTranslate2 stores zeros)
            names[f"{prefix}.{kind}_proj.bias"] = b_in[i * d : (i + 1) * d]
    names[f"{prefix}.out_proj.weight"], names[f"{prefix}.out_proj.bias"] = w.w_o_dd, w.b_o_d
    ln = prefix.replace("self_attn", "self_attn_layer_norm").replace(
        "encoder_attn", "encoder_attn_layer_norm"
    )
    names[f"{ln}.weight"], names[f"{ln}.bias"] = w.norm_gamma_d, w.norm_beta_d
    return names


def _layer(prefix: str, lay: Any, d: int) -> dict[str, np.ndarray]:
    names = _attn(f"{prefix}.self_attn", lay.self_attn, d, False)
    if lay.cross_attn is not None:
        names.update(_attn(f"{prefix}.encoder_attn", lay.cross_attn, d, True))
    f = lay.ffn
    names[f"{prefix}.fc1.weight"], names[f"{prefix}.fc1.bias"] = f.w_up_fd, f.b_up_f
    names[f"{prefix}.fc2.weight"], names[f"{prefix}.fc2.bias"] = f.w_down_df, f.b_down_d
    names[f"{prefix}.final_layer_norm.weight"] = f.norm_gamma_d
    names[f"{prefix}.final_layer_norm.bias"] = f.norm_beta_d
    return names


def mapped_state(model: WhisperModel) -> dict[str, np.ndarray]:
    """model.bin's weights (as the engine read them) under transformers' names."""
    p, d = model.params, model.config.d_model
    names = {
        "model.encoder.conv1.weight": p.conv1_w_oik,
        "model.encoder.conv1.bias": p.conv1_b_o,
        "model.encoder.conv2.weight": p.conv2_w_oik,
        "model.encoder.conv2.bias": p.conv2_b_o,
        "model.encoder.embed_positions.weight": p.encoder_pos_td,
        "model.encoder.layer_norm.weight": p.encoder_norm[0],
        "model.encoder.layer_norm.bias": p.encoder_norm[1],
        "model.decoder.embed_tokens.weight": p.embed_vd,
        "model.decoder.embed_positions.weight": p.decoder_pos_td,
        "model.decoder.layer_norm.weight": p.decoder_norm[0],
        "model.decoder.layer_norm.bias": p.decoder_norm[1],
        "proj_out.weight": p.embed_vd,
    }
    for i, lay in enumerate(p.encoder_layers):
        names.update(_layer(f"model.encoder.layers.{i}", lay, d))
    for i, lay in enumerate(p.decoder_layers):
        names.update(_layer(f"model.decoder.layers.{i}", lay, d))
    return names


@lru_cache(maxsize=1)
def hf_model() -> Any:
    """transformers' Whisper with model.bin's weights, eager attention, float32."""
    import torch
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    cfg = engine().config
    hf_cfg = WhisperConfig(
        vocab_size=cfg.vocab_size,
        num_mel_bins=cfg.n_mels,
        encoder_layers=cfg.n_encoder_layers,
        decoder_layers=cfg.n_decoder_layers,
        encoder_attention_heads=cfg.n_heads,
        decoder_attention_heads=cfg.n_heads,
        d_model=cfg.d_model,
        encoder_ffn_dim=cfg.d_ff,
        decoder_ffn_dim=cfg.d_ff,
        max_source_positions=cfg.n_frames,
        max_target_positions=cfg.n_text_ctx,
        activation_function="gelu",
        pad_token_id=cfg.eot_id,
        bos_token_id=cfg.eot_id,
        eos_token_id=cfg.eot_id,
        decoder_start_token_id=cfg.prompt_ids[0],
        attn_implementation="eager",
    )
    model = WhisperForConditionalGeneration(hf_cfg).eval()
    state = {k: torch.from_numpy(np.array(v)) for k, v in mapped_state(engine()).items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected, unexpected
    assert set(missing) <= {"model.decoder.embed_tokens.weight", "proj_out.weight"}, missing
    return model


def hf_attentions(mel_ft: np.ndarray, token_ids: tuple[int, ...]) -> Any:
    """transformers' outputs (encoder, decoder and cross attentions, hidden states) for the
    clip's log-mel and the decoder input ``token_ids``."""
    import torch

    with torch.no_grad():
        return hf_model()(
            input_features=torch.from_numpy(mel_ft[None]),
            decoder_input_ids=torch.tensor([list(token_ids)]),
            output_attentions=True,
            output_hidden_states=True,
        )
