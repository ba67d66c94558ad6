"""Whisper's passes on the shared attention core: the encoder over a log-mel spectrogram, and
the decoder over tokens (masked self-attention, then cross-attention to the encoder's output).

Every attention goes through ``attention_core.core.attention.attend``. The encoder's convolutional
stem is two 1-D convolutions of width 3 (the second with stride 2: 3000 mel frames -> 1500
positions of 20 ms), each followed by GELU, written as one matmul over stacked windows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attention_core.core.attention import attend
from attention_core.core.config import ModelConfig
from attention_core.core.functional import gelu, layer_norm
from attention_core.core.whatif import WhatIf
from attention_core.models.whisper.model import AttentionWeights, FfnWeights, WhisperModel

F32 = NDArray[np.float32]
KV = tuple[F32, F32]  # keys and values, [h, k, e] each


def linear(x_ti: F32, w_oi: F32, b_o: F32) -> F32:
    """x @ wᵀ + b, the weights [out, in] as stored."""
    out = x_ti @ w_oi.T
    out += b_o
    return out


def conv1d(x_tc: F32, w_oik: F32, b_o: F32, stride: int) -> F32:
    """A width-3, padding-1 convolution along time of ``x_tc`` [time, channels] -> [time', out]."""
    n_out = (len(x_tc) - 1) // stride + 1
    pad_tc = np.pad(x_tc, ((1, 1), (0, 0)))
    span = stride * (n_out - 1) + 1
    cols_tkc = np.stack([pad_tc[k : k + span : stride] for k in range(3)], axis=1)
    w_okc = w_oik.transpose(0, 2, 1)  # [out, in, k] -> [out, k, in], matching the windows
    return linear(cols_tkc.reshape(n_out, -1), w_okc.reshape(len(w_oik), -1), b_o)


def heads(x_tn: F32, n_heads: int) -> F32:
    """[t, h·e] -> [h, t, e]."""
    return x_tn.reshape(len(x_tn), n_heads, -1).transpose(1, 0, 2)


def merge(z_hqe: F32) -> F32:
    """[h, q, e] -> [q, h·e], the heads side by side as W_O reads them."""
    return z_hqe.transpose(1, 0, 2).reshape(z_hqe.shape[1], -1)


def norm(x_td: F32, gamma_beta: tuple[F32, F32], cfg: ModelConfig) -> F32:
    return layer_norm(x_td, gamma_beta[0], gamma_beta[1], cfg.layer_norm_eps)


def self_attention(
    w: AttentionWeights, cfg: ModelConfig, x_td: F32, past: KV | None, causal: bool
) -> tuple[F32, F32, KV]:
    """Pre-LN self-attention of ``x_td``: (pattern_hqk, delta_td, this layer's keys and values
    with ``past``'s in front, for the next step)."""
    h_td = norm(x_td, (w.norm_gamma_d, w.norm_beta_d), cfg)
    qkv_tn = linear(h_td, w.w_in_nd, w.b_in_n)
    q_hqe, k_hke, v_hke = (heads(a, cfg.n_heads) for a in np.split(qkv_tn, 3, axis=1))
    if past is not None:
        k_hke = np.concatenate([past[0], k_hke], axis=1)
        v_hke = np.concatenate([past[1], v_hke], axis=1)
    _, pattern_hqk, z_hqe = attend(q_hqe, k_hke, v_hke, WhatIf(causal=causal))
    return pattern_hqk, linear(merge(z_hqe), w.w_o_dd, w.b_o_d), (k_hke, v_hke)


def cross_memory(w: AttentionWeights, cfg: ModelConfig, audio_kd: F32) -> KV:
    """Keys and values of cross-attention from the encoder's output (once per clip)."""
    kv_kn = linear(audio_kd, w.w_in_nd[cfg.d_model :], w.b_in_n[cfg.d_model :])
    k_kd, v_kd = np.split(kv_kn, 2, axis=1)
    return heads(k_kd, cfg.n_heads), heads(v_kd, cfg.n_heads)


def cross_attention(
    w: AttentionWeights, cfg: ModelConfig, x_td: F32, memory: KV
) -> tuple[F32, F32]:
    """Pre-LN cross-attention: queries from the decoder's stream, keys and values from the
    audio. Returns (pattern_hqk over the 1500 encoder positions, delta_td)."""
    h_td = norm(x_td, (w.norm_gamma_d, w.norm_beta_d), cfg)
    q_hqe = heads(linear(h_td, w.w_in_nd[: cfg.d_model], w.b_in_n[: cfg.d_model]), cfg.n_heads)
    _, pattern_hqk, z_hqe = attend(q_hqe, memory[0], memory[1])
    return pattern_hqk, linear(merge(z_hqe), w.w_o_dd, w.b_o_d)


def ffn(w: FfnWeights, cfg: ModelConfig, x_td: F32) -> F32:
    """Pre-LN MLP: LayerNorm, linear, GELU (erf), linear."""
    h_td = norm(x_td, (w.norm_gamma_d, w.norm_beta_d), cfg)
    return linear(gelu(linear(h_td, w.w_up_fd, w.b_up_f)), w.w_down_df, w.b_down_d)


def encoder_stem(model: WhisperModel, mel_ft: F32) -> F32:
    """Conv, GELU, conv (stride 2), GELU, plus the sinusoidal positions: [1500, d]."""
    dims, p = model.dims, model.params
    want = (dims.n_mels, 2 * dims.n_frames)
    if mel_ft.shape != want:
        raise ValueError(f"mel_ft must be {list(want)} (30 s of log-mel), got {mel_ft.shape}")
    x_td = gelu(conv1d(np.ascontiguousarray(mel_ft.T, np.float32), p.conv1_w_oik, p.conv1_b_o, 1))
    x_td = gelu(conv1d(x_td, p.conv2_w_oik, p.conv2_b_o, 2))
    x_td += p.encoder_pos_td
    return x_td


def encode(model: WhisperModel, mel_ft: F32) -> F32:
    """The encoder: hidden_ltd [n_layers + 1, 1500, d]; [l] enters layer l, [-1] is the output
    after the final LayerNorm (what the decoder's cross-attention reads)."""
    cfg, dims, p = model.config, model.dims, model.params
    hidden = np.empty((dims.n_encoder_layers + 1, dims.n_frames, cfg.d_model), np.float32)
    x_td = encoder_stem(model, mel_ft)
    for i, lay in enumerate(p.encoder_layers):
        hidden[i] = x_td
        _, delta_td, _ = self_attention(lay.self_attn, cfg, x_td, None, causal=False)
        x_td = x_td + delta_td
        x_td += ffn(lay.ffn, cfg, x_td)
    hidden[-1] = norm(x_td, p.encoder_norm, cfg)
    hidden.flags.writeable = False
    return hidden


def encoder_pattern(model: WhisperModel, hidden_ltd: F32, layer: int) -> F32:
    """Encoder layer ``layer``'s self-attention pattern [h, 1500, 1500], recomputed from the
    stream entering it (54 MB: computed when asked, never all four held)."""
    if not 0 <= layer < model.dims.n_encoder_layers:
        raise ValueError(f"layer {layer} is outside 0..{model.dims.n_encoder_layers - 1}")
    lay = model.params.encoder_layers[layer]
    return self_attention(lay.self_attn, model.config, hidden_ltd[layer], None, False)[0]


@dataclass(frozen=True)
class DecoderPass:
    """The decoder over some tokens: every layer's patterns, the stream, the keys and values."""

    self_pattern_lhqk: list[F32]  # masked self-attention, [h, new tokens, all tokens so far]
    cross_pattern_lhqk: list[F32]  # [h, new tokens, 1500]
    hidden_ltd: F32  # [n_layers + 1, new tokens, d]; [-1] after the final LayerNorm
    kv: list[KV]  # each layer's self-attention keys and values, all tokens so far


def decode_tokens(
    model: WhisperModel, ids: list[int], memory: list[KV], past: list[KV] | None = None
) -> DecoderPass:
    """The decoder over ``ids`` following the ``past`` tokens (whose keys and values ``past``
    holds; several new tokens only with no past, so the causal mask lines up)."""
    cfg, p = model.config, model.params
    start = 0 if past is None else past[0][0].shape[1]
    if start + len(ids) > cfg.n_positions or (past is not None and len(ids) > 1):
        raise ValueError(f"{len(ids)} tokens after {start}: the decoder holds {cfg.n_positions}")
    x_td = p.embed_vd[ids] + p.decoder_pos_td[start : start + len(ids)]
    hidden = np.empty((cfg.n_layers + 1, len(ids), cfg.d_model), np.float32)
    selfs, crosses, kv = [], [], []
    for i, lay in enumerate(p.decoder_layers):
        assert lay.cross_attn is not None  # every decoder layer has one
        hidden[i] = x_td
        pattern, delta_td, layer_kv = self_attention(
            lay.self_attn, cfg, x_td, None if past is None else past[i], causal=past is None
        )
        x_td = x_td + delta_td
        cross, delta_td = cross_attention(lay.cross_attn, cfg, x_td, memory[i])
        x_td += delta_td
        x_td += ffn(lay.ffn, cfg, x_td)
        selfs.append(pattern)
        crosses.append(cross)
        kv.append(layer_kv)
    hidden[-1] = norm(x_td, p.decoder_norm, cfg)
    return DecoderPass(selfs, crosses, hidden, kv)


def memory_of(model: WhisperModel, audio_kd: F32) -> list[KV]:
    """Every decoder layer's cross-attention keys and values of the encoder's output."""
    layers = model.params.decoder_layers
    return [
        cross_memory(lay.cross_attn, model.config, audio_kd) for lay in layers if lay.cross_attn
    ]
