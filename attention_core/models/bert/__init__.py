"""The BERT family (all-MiniLM-L6-v2, an encoder): config and loading from a sentence-transformers
folder (``model``), its weights (``weights``) and its forward pass (``forward``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from attention_core.core.config import ModelConfig
from attention_core.core.family import Offers
from attention_core.core.tokens import Tokens
from attention_core.core.whatif import WhatIf

if TYPE_CHECKING:
    from attention_core.models.bert.forward import Trace
    from attention_core.models.bert.model import Model


class BertFamily:
    """BERT encoders from a sentence-transformers folder: the packaged MiniLM, or any folder."""

    name = "bert"
    offers = Offers(causal=False, sentence_vector=True, next_token=False, audio=False)
    keys = ("minilm",)

    def claims(self, path: str) -> bool:
        return "/" in path or Path(path).expanduser().exists()  # a folder, or a cached hub name

    def load(self, path: str) -> Model:
        from attention_core.models.bert.model import load_bert

        return load_bert(path)

    def load_config(self, path: str) -> ModelConfig:
        from attention_core.models.bert.model import load_bert_config

        return load_bert_config(path)

    def tokenize(self, model: Model, text: str, max_tokens: int | None) -> Tokens:
        from attention_core.models.bert.tokenizer import tokenize_bert

        return tokenize_bert(model, text, max_tokens)

    def run(self, model: Model, tokens: Tokens, whatif: WhatIf) -> Trace:
        from attention_core.models.bert.forward import run_bert

        return run_bert(model, tokens, whatif)

    def trace_sentence(
        self, model: Model, text: str, whatif: WhatIf, max_tokens: int | None
    ) -> Trace:
        from attention_core.models.bert.forward import trace_bert

        return trace_bert(model, text, whatif, max_tokens)

    def trace_nbytes(self, config: ModelConfig, n_tokens: int) -> int:
        from attention_core.models.bert.forward import bert_trace_nbytes

        return bert_trace_nbytes(config, n_tokens)


BERT = BertFamily()
