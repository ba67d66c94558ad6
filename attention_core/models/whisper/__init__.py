"""The Whisper family (tiny.en, an encoder-decoder over the visitor's voice, from a CTranslate2
folder): the file reader (``ct2_file``), audio in (``audio``), the log-mel spectrogram (``mel``),
the common config and the Whisper-only sizes (``config``), weights, tokenizer and loading
(``model``), the passes (``forward``) and transcription (``generate``).

``WHISPER`` is its family object (``attention_core.core.family.Family``), registered in
``attention_core.models.FAMILIES``: ``load_model("whisper")`` loads the packaged tiny.en.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from attention_core.core.config import ModelConfig
from attention_core.core.family import Offers
from attention_core.core.tokens import Tokens
from attention_core.core.whatif import WhatIf

if TYPE_CHECKING:
    from attention_core.models.whisper.generate import WhisperTrace
    from attention_core.models.whisper.model import WhisperModel

READS_AUDIO = (
    "Whisper reads audio, not tokens: transcribe(model, log_mel(samples)) runs it on a clip, "
    "and trace_sentence speaks a text with espeak-ng first"
)


class WhisperFamily:
    """Whisper from a CTranslate2 folder (model.bin, config.json, tokenizer.json): the packaged
    tiny.en, or any such folder. Its modules are imported on first use."""

    name = "whisper"
    offers = Offers(causal=True, sentence_vector=False, next_token=True, audio=True)
    keys = ("whisper",)

    def claims(self, path: str) -> bool:
        """A folder holding a CTranslate2 Whisper model.bin (only its first bytes are read)."""
        from attention_core.models.whisper.config import SPEC
        from attention_core.models.whisper.ct2_file import ct2_spec

        return ct2_spec(Path(path).expanduser() / "model.bin") == SPEC

    def load(self, path: str) -> WhisperModel:
        from attention_core.models.whisper.model import load_whisper

        return load_whisper(path)

    def load_config(self, path: str) -> ModelConfig:
        from attention_core.models.whisper.config import load_whisper_config

        return load_whisper_config(path)

    def tokenize(self, model: WhisperModel, text: str, max_tokens: int | None) -> Tokens:
        from attention_core.models.whisper.model import tokenize_whisper

        return tokenize_whisper(model, text, max_tokens)

    def run(self, model: WhisperModel, tokens: Tokens, whatif: WhatIf) -> WhisperTrace:
        """Refused: a decoder pass over tokens needs the audio they were written from (the
        cross-attention's keys), which tokens do not carry."""
        raise ValueError(READS_AUDIO + ".")

    def trace_sentence(
        self, model: WhisperModel, text: str, whatif: WhatIf, max_tokens: int | None
    ) -> WhisperTrace:
        """``text`` spoken by espeak-ng (``audio.speak``, as the Listen page's typed text) and
        transcribed: at most ``max_tokens`` text tokens are written (default: as many as
        Whisper's greedy decoding writes, 224 at most). Transcription takes no what-if but the
        causal mask it always has (ValueError for another); ``audio.AudioError`` (a ValueError)
        when espeak-ng is missing or the text is too long to speak."""
        from attention_core.models.whisper.audio import speak
        from attention_core.models.whisper.generate import MAX_LENGTH, transcribe
        from attention_core.models.whisper.mel import log_mel

        if whatif not in (WhatIf(), WhatIf(causal=True)):
            raise ValueError("Whisper's transcription takes no what-if switch")
        if max_tokens is not None and max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        max_length = MAX_LENGTH if max_tokens is None else min(MAX_LENGTH, 2 * max_tokens)
        return transcribe(model, log_mel(speak(text).samples_n), max_length)

    def trace_nbytes(self, config: ModelConfig, n_tokens: int) -> int:
        """Bytes of a WhisperTrace's arrays with ``n_tokens`` text tokens (the prompt added)."""
        from attention_core.models.whisper.config import PROMPT_TOKENS, audio_sizes
        from attention_core.models.whisper.generate import whisper_trace_nbytes

        audio = audio_sizes(config.key)
        return whisper_trace_nbytes(config, audio, len(PROMPT_TOKENS), n_tokens)


WHISPER = WhisperFamily()
