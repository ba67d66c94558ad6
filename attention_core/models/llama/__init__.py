"""The Llama family (SmolLM2-135M-Instruct, a decoder, from a GGUF file): the file reader
(``gguf_file``), config, weights and loading (``model``), the byte-level BPE tokenizer, one decoder
layer (``layers``), the pass and its trace (``forward``, ``cache``) and generation
(``generate``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_core.core.config import ModelConfig
from attention_core.core.family import Offers
from attention_core.core.tokens import Tokens
from attention_core.core.whatif import WhatIf

if TYPE_CHECKING:
    from attention_core.models.llama.forward import LlamaTrace
    from attention_core.models.llama.model import LlamaModel


class LlamaFamily:
    """Llama decoders from a GGUF file: the packaged SmolLM2, or any ``.gguf`` path. Its modules
    are imported on first use: a visitor who never picks SmolLM2 never pays for them."""

    name = "llama"
    offers = Offers(causal=True, sentence_vector=False, next_token=True, audio=False)
    keys = ("smollm2",)

    def claims(self, path: str) -> bool:
        return path.endswith(".gguf")

    def load(self, path: str) -> LlamaModel:
        from attention_core.models.llama.model import load_llama

        return load_llama(path)

    def load_config(self, path: str) -> ModelConfig:
        from attention_core.models.llama.model import load_llama_config

        return load_llama_config(path)

    def tokenize(self, model: LlamaModel, text: str, max_tokens: int | None) -> Tokens:
        from attention_core.models.llama.tokenizer import tokenize_llama

        return tokenize_llama(model.tokenizer, model.config, text, max_tokens)

    def run(self, model: LlamaModel, tokens: Tokens, whatif: WhatIf) -> LlamaTrace:
        from attention_core.models.llama.forward import run_llama

        return run_llama(model, tokens, whatif)

    def trace_sentence(
        self, model: LlamaModel, text: str, whatif: WhatIf, max_tokens: int | None
    ) -> LlamaTrace:
        """Its causal mask is always on, whatever ``whatif.causal`` says."""
        return self.run(model, self.tokenize(model, text, max_tokens), whatif)

    def trace_nbytes(self, config: ModelConfig, n_tokens: int) -> int:
        from attention_core.models.llama.forward import llama_trace_nbytes

        return llama_trace_nbytes(config, n_tokens)


LLAMA = LlamaFamily()
