"""Beyond the weights, the importance sweep: every head knocked out alone, ranked by its effect at
the chosen token (attention_core.methods.knockout.head_importance), with a progress bar; a row of
the ranking opens that head's knock-out above."""

from __future__ import annotations

import streamlit as st

from attention_core.core.family import Trace
from attention_core.methods.knockout import Importance
from server.budget import Busy
from ui import glossary, safe, show
from ui.beyond.cache import importance, importance_done
from ui.beyond.knock import is_decoder, set_heads
from ui.router import Shared
from ui.state.beyond import BEYOND, Beyond

SWEEP_MAX_TOKENS = 64  # longest run (tokens the sweep reads) it starts; beyond it, a message


def _ask(model: str, text: str, at: int) -> None:
    """The button's callback. A flag, not the button's own value, starts the sweep: a rerun
    that interrupts it (the explorer reporting a click) would otherwise forget the press, and
    with the flag the next run starts the sweep again."""
    BEYOND.asked = (model, text, at)


def open_ranked() -> None:
    """The ranking's row callback: knock out the head of the picked row alone."""
    rows = BEYOND.ranking["selection"]["rows"]
    ranked = BEYOND.ranked
    if rows and rows[0] < len(ranked):
        set_heads([ranked[rows[0]]])


def _tokens_read(trace: Trace, at: int) -> int:
    """Tokens each rerun reads: a decoder's up to the chosen one, an encoder's all."""
    return at + 1 if is_decoder(trace) else trace.n_tokens


def render(shared: Shared, trace: Trace, at: int) -> None:
    """The sweep's button (or a message when the run would be too long) and its ranking."""
    cfg = trace.config
    total = cfg.n_layers * cfg.n_heads
    done = importance_done(shared.model, shared.text, at)
    read = _tokens_read(trace, at)
    if done is None and read > SWEEP_MAX_TOKENS:
        glossary.box(
            f"The sweep reads {read} tokens here; it runs up to {SWEEP_MAX_TOKENS}, so that you "
            "never wait minutes. "
            + (
                "Choose an earlier token to predict after."
                if is_decoder(trace)
                else "Try a shorter sentence."
            ),
            kind="warning",
        )
        return
    if done is None:
        key = (shared.model, shared.text, at)
        if BEYOND.asked != key:
            glossary.note(
                f"The sweep runs the model {total} times, once without each head, on {read} "
                "tokens. On one core that takes about 10 seconds for SmolLM2 at 17 tokens (and "
                "grows with the length), a few seconds for MiniLM."
            )
            st.button(
                "Rank every head",
                key=Beyond.sweep.key,
                icon=":material/sort:",
                on_click=_ask,
                args=key,
            )
            return
        bar = st.progress(0.0, text=f"Knocking out each of {total} heads…")

        def tell(layers_done: int, layers: int) -> None:
            bar.progress(layers_done / layers, text=f"Layer {layers_done} of {layers} done")

        try:
            done = importance(shared.model, shared.text, at, tell)
        except Busy as err:  # asked again by a press, not by the next rerun
            BEYOND.asked = None
            bar.empty()
            glossary.box(str(err), icon=":material/hourglass_empty:", kind="warning")
            return
        BEYOND.asked = None
        bar.empty()
    _ranking(done)


def _ranking(done: Importance) -> None:
    ranked = done.ranked()
    labels = [f"{layer}.{head}" for layer, head, _ in ranked]
    BEYOND.ranked = tuple(labels)
    st.dataframe(
        {
            "rank": list(range(1, len(ranked) + 1)),
            "layer": [layer for layer, _, _ in ranked],
            "head": [head for _, head, _ in ranked],
            "effect": [effect for _, _, effect in ranked],
        },
        key=Beyond.ranking.key,
        on_select=open_ranked,
        selection_mode="single-row",
        hide_index=True,
        column_config={"effect": show.SIGNED},
    )
    glossary.note(
        safe.md(f"Effect: {done.measure}, with that head alone knocked out.")
        + " Click a row to knock out that head alone, above."
    )
