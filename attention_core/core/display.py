"""Display policy, decided once in the engine for every view (pages, figures, explorer header):
how a hidden state is named. Which tokens a view shows is ``pack.visible_tokens``; how pieces
group into words is ``words.word_spans`` (tables) and ``geometry.split_words`` (word choices)."""

from __future__ import annotations


def state_name(state: int) -> str:
    """Label of a hidden-state index, in the app's one numbering: layers (blocks) count from 0,
    like the sidebar's Layer slider; state 0 is the static embedding, state l comes out of
    layer l − 1."""
    if state < 0:
        raise ValueError(f"hidden state {state} is negative")
    return "embedding" if state == 0 else f"after layer {state - 1}"
