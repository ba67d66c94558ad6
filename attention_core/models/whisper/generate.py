"""Transcribing a clip: the encoder, greedy decoding with CTranslate2's rules, and one decoder
pass over the whole transcript that keeps every attention.

CTranslate2's ``Whisper.generate(features, [prompt], beam_size=1)`` (4.x ``whisper.cc``): the
prompt's last token starts the decoding; ``suppress_ids`` from config.json are never chosen,
``suppress_ids_begin`` (a bare space, the end token) not at the first step ("suppress_blank");
at most ``max_length // 2`` = 224 tokens are generated (max_length 448); the end token stops
it and is not part of the result; ties go to the lowest id (argmax). No timestamp rules apply
after ``<|notimestamps|>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attention_core.core.config import ModelConfig
from attention_core.models.whisper.forward import (
    KV,
    decode_tokens,
    encode,
    encoder_pattern,
    memory_of,
)
from attention_core.models.whisper.model import WhisperModel

F32 = NDArray[np.float32]
MAX_LENGTH = 448  # CTranslate2's default max_length; it generates at most half of it


def writing_rows(n_prompt: int, n_tokens: int) -> tuple[int, int]:
    """The cross-attention rows that wrote the text tokens, half-open: row r is the decoder
    reading token r to choose token r + 1, so text token i (after ``n_prompt`` prompt tokens)
    was written by row ``n_prompt - 1 + i``; the last row, which wrote the end token, is left
    out. This is where a word "listened" (OpenAI's word timings read the same rows)."""
    if not 0 < n_prompt <= n_tokens:
        raise ValueError(f"need 0 < n_prompt <= n_tokens, got {n_prompt}, {n_tokens}")
    return n_prompt - 1, n_tokens - 1


@dataclass(frozen=True, eq=False)
class WhisperTrace:
    """A clip transcribed: the input, the encoder's stream, the tokens, every decoder
    attention. The encoder's self-attention (4 × 6 × 1500² floats, 216 MB) is computed per
    layer when asked: ``encoder_pattern_hqk(layer)``."""

    mel_ft: F32  # [80, 3000] log-mel input
    encoder_hidden_ltd: F32  # [5, 1500, d]: [l] enters layer l, [-1] after the final LayerNorm
    token_ids: tuple[int, ...]  # prompt + text tokens (no end token)
    text_ids: tuple[int, ...]  # the generated text tokens alone
    text: str  # their text
    self_pattern_lhqk: F32  # [4, 6, T, T] the decoder's masked self-attention
    cross_pattern_lhqk: F32  # [4, 6, T, 1500] each token over the audio's 20 ms frames
    decoder_hidden_ltd: F32  # [5, T, d]: [l] enters layer l, [-1] after the final LayerNorm
    alignment_heads: tuple[tuple[int, int], ...]  # (layer, head) from config.json
    model: WhisperModel = field(repr=False)

    @property
    def config(self) -> ModelConfig:
        """The model's common config (``attention_core.models.family_of`` reads it)."""
        return self.model.config

    @property
    def prompt_ids(self) -> tuple[int, ...]:
        return self.token_ids[: len(self.token_ids) - len(self.text_ids)]

    @property
    def n_prompt(self) -> int:
        """The prompt's tokens, which come first."""
        return len(self.token_ids) - len(self.text_ids)

    @property
    def writing_rows(self) -> tuple[int, int]:
        """The cross-attention rows that wrote the text tokens (``writing_rows``)."""
        return writing_rows(self.n_prompt, len(self.token_ids))

    @property
    def tokens(self) -> list[str]:
        """Every token of ``token_ids`` as the vocabulary writes it."""
        return self.model.token_strings(self.token_ids)

    def encoder_pattern_hqk(self, layer: int) -> F32:
        """Encoder layer ``layer``'s self-attention [6, 1500, 1500] (computed now, 54 MB)."""
        return encoder_pattern(self.model, self.encoder_hidden_ltd, layer)

    @property
    def nbytes(self) -> int:
        held = (self.mel_ft, self.encoder_hidden_ltd, self.self_pattern_lhqk)
        held2 = (self.cross_pattern_lhqk, self.decoder_hidden_ltd)
        return sum(int(a.nbytes) for a in held + held2)


def whisper_trace_nbytes(
    config: ModelConfig, audio: tuple[int, int, int], n_prompt: int, n_text: int
) -> int:
    """Bytes of a WhisperTrace's arrays (``WhisperTrace.nbytes``) with ``n_text`` text tokens
    after ``n_prompt`` prompt tokens, before it is computed; ``audio`` is (n_mels, n_frames,
    n_encoder_layers) (``config.audio_sizes``). All float32: the log-mel [m, 2f], the encoder's
    stream [le + 1, f, d], the decoder's self-attention [l, h, t, t] and cross-attention
    [l, h, t, f], the decoder's stream [l + 1, t, d]."""
    n_mels, n_frames, n_enc = audio
    t, d, n_l, n_h = n_prompt + n_text, config.d_model, config.n_layers, config.n_heads
    floats = n_mels * 2 * n_frames + (n_enc + 1) * n_frames * d
    floats += n_l * n_h * t * (t + n_frames) + (n_l + 1) * t * d
    return 4 * floats


def logits_v(model: WhisperModel, final_d: F32) -> F32:
    """Output logits of one final-normed row: the tied embedding."""
    return model.params.embed_vd @ final_d  # [v,d] @ [d] -> [v]


def _choose(model: WhisperModel, final_d: F32, first: bool) -> int:
    dims = model.dims
    logits = logits_v(model, final_d)
    logits[list(dims.suppress_ids)] = -np.inf
    if first:
        logits[list(dims.suppress_ids_begin)] = -np.inf
    return int(np.argmax(logits))


def greedy(
    model: WhisperModel, memory: list[KV], prompt: tuple[int, ...], max_length: int = MAX_LENGTH
) -> list[int]:
    """The text tokens greedy decoding gives after ``prompt`` (no end token)."""
    n_ctx = model.config.n_positions
    n_steps = min(max_length // 2, max_length - (len(prompt) - 1), n_ctx - len(prompt))
    step = decode_tokens(model, list(prompt), memory)
    out: list[int] = []
    for i in range(n_steps):
        token = _choose(model, step.hidden_ltd[-1][-1], first=i == 0)
        if token == model.dims.eot_id:
            break
        out.append(token)
        if i + 1 < n_steps:
            step = decode_tokens(model, [token], memory, step.kv)
    return out


def transcribe(model: WhisperModel, mel_ft: F32, max_length: int = MAX_LENGTH) -> WhisperTrace:
    """Encode ``mel_ft`` [80, 3000], decode greedily from <|startoftranscript|><|notimestamps|>,
    then run the decoder once over prompt + text keeping every attention."""
    mel_ft = np.array(mel_ft, dtype=np.float32)  # a copy: it is frozen below
    hidden = encode(model, mel_ft)
    memory = memory_of(model, hidden[-1])
    prompt = model.dims.prompt_ids
    text_ids = greedy(model, memory, prompt, max_length)
    ids = list(prompt) + text_ids
    full = decode_tokens(model, ids, memory)
    self_pattern = np.stack(full.self_pattern_lhqk)
    cross_pattern = np.stack(full.cross_pattern_lhqk)
    for array in (mel_ft, self_pattern, cross_pattern, full.hidden_ltd):
        array.flags.writeable = False
    return WhisperTrace(
        mel_ft,
        hidden,
        tuple(ids),
        tuple(text_ids),
        model.decode(text_ids).strip(),
        self_pattern,
        cross_pattern,
        full.hidden_ltd,
        model.dims.alignment_heads,
        model,
    )


def listen_arrays(trace: WhisperTrace, notices: tuple[str, ...] = ()) -> dict[str, NDArray[Any]]:
    """The ``listen`` command's .npz: text, token_ids (the text tokens), prompt_ids,
    encoder_hidden [1500, d] (after the final LayerNorm), cross_pattern [4, 6, T, 1500],
    self_pattern [4, 6, T, T] (T = prompt + text tokens), log_mel [80, 3000], notices."""
    return {
        "text": np.asarray(trace.text, dtype=str),
        "token_ids": np.asarray(trace.text_ids, dtype=np.int64),
        "prompt_ids": np.asarray(trace.prompt_ids, dtype=np.int64),
        "encoder_hidden": trace.encoder_hidden_ltd[-1],
        "cross_pattern": trace.cross_pattern_lhqk,
        "self_pattern": trace.self_pattern_lhqk,
        "log_mel": trace.mel_ft,
        "notices": np.asarray(notices, dtype=str),
    }
