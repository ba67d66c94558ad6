"""Display policy, decided once in the engine for every view (pages, figures, explorer header):
how a hidden state is named. Which tokens a view shows is ``pack.visible_tokens``; how pieces
group into words is ``words.word_spans`` (tables) and ``geometry.split_words`` (word choices)."""

from __future__ import annotations

from attention_core.core.config import ModelConfig


def state_name(state: int, config: ModelConfig | None = None) -> str:
    """Label of a hidden-state index, in the app's one numbering: layers (blocks) count from 0,
    like the sidebar's Layer slider; state 0 is the static embedding, state l comes out of
    layer l − 1. Given the model's ``config``, the last state of a model whose pass ends in a
    final norm (``config.final_norm``: SmolLM2's RMSNorm, as transformers' ``hidden_states[-1]``)
    says so: "after layer 29 and the final RMSNorm". Without it every state is named by its layer
    alone, which is the whole truth for a post-norm encoder (MiniLM)."""
    if state < 0:
        raise ValueError(f"hidden state {state} is negative")
    if config is not None and state > config.n_layers:
        raise ValueError(f"hidden state {state} is past {config.name}'s {config.n_layers} layers")
    if state == 0:
        return "embedding"
    name = f"after layer {state - 1}"
    if config is not None and config.final_norm and state == config.n_layers:
        return f"{name} and the final {config.final_norm}"
    return name
