"""A fourth family, kept under tests: GPT-2 (a pre-norm decoder with learned positions, biased
projections and a tied LM head) from a transformers folder, run over the engine's shared core.
It is one folder and one registry line (``attention_core.models.register(GPT2)``): the config
and loading (``model``), a word-level tokenizer built in code (``tokenizer``), one block
(``layers``), the pass and its trace (``forward``); ``build`` writes a folder of random weights
with transformers itself, which the tests also use as the reference."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from attention_core.core.config import ModelConfig
from attention_core.core.family import Offers
from attention_core.core.tokens import Tokens
from attention_core.core.whatif import WhatIf

if TYPE_CHECKING:
    from attention_core.core.family import Family
    from tests.families.gpt2.forward import GPT2Trace
    from tests.families.gpt2.model import GPT2Model


class GPT2Family:
    """GPT-2 decoders from a folder whose ``config.json`` says ``"model_type": "gpt2"``."""

    name = "gpt2"
    offers = Offers(causal=True, sentence_vector=False, next_token=True, audio=False)
    keys: tuple[str, ...] = ()  # nothing packaged: a folder only

    def claims(self, path: str) -> bool:
        from tests.families.gpt2.model import read_gpt2_json

        return read_gpt2_json(Path(path).expanduser()) is not None

    def load(self, path: str) -> GPT2Model:
        from tests.families.gpt2.model import load_gpt2

        return load_gpt2(path)

    def load_config(self, path: str) -> ModelConfig:
        from tests.families.gpt2.model import load_gpt2_config

        return load_gpt2_config(path)

    def tokenize(self, model: GPT2Model, text: str, max_tokens: int | None) -> Tokens:
        from tests.families.gpt2.tokenizer import tokenize_gpt2

        return tokenize_gpt2(model, text, max_tokens)

    def run(self, model: GPT2Model, tokens: Tokens, whatif: WhatIf) -> GPT2Trace:
        from tests.families.gpt2.forward import run_gpt2

        return run_gpt2(model, tokens, whatif)

    def trace_sentence(
        self, model: GPT2Model, text: str, whatif: WhatIf, max_tokens: int | None
    ) -> GPT2Trace:
        """Its causal mask is always on, whatever ``whatif.causal`` says."""
        return self.run(model, self.tokenize(model, text, max_tokens), whatif)

    def trace_nbytes(self, config: ModelConfig, n_tokens: int) -> int:
        from tests.families.gpt2.forward import gpt2_trace_nbytes

        return gpt2_trace_nbytes(config, n_tokens)


GPT2 = GPT2Family()

if TYPE_CHECKING:  # mypy checks the family against the interface the registry asks of it
    _CHECKED: Family[GPT2Model] = GPT2
