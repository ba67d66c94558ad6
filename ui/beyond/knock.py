"""Beyond the weights, section 3: knock out heads and rerun. A decoder's next-token prediction
before and after; an encoder's token vector per layer and its sentence embedding. The numbers are
attention_core.methods.knockout's (through ui.beyond.cache); every token is shown as plain text."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core import default_token
from attention_core.core.family import Trace
from attention_core.core.pieces import show_piece
from attention_core.methods.knockout import Heads, parse_heads
from ui import glossary, safe, show
from ui.beyond.cache import prediction, vector
from ui.cache import get_model
from ui.router import Shared
from ui.state.beyond import BEYOND, Beyond
from ui.widgets import token_picker
from viz.embedding_shift import layer_name
from viz.knockout import make_knockout_cosine


def label(head: str) -> str:
    """ "3.7" -> "layer 3, head 7", as the app names heads."""
    layer, _, number = head.partition(".")
    return f"layer {layer}, head {number}"


def piece(model: str, token_id: int) -> str:
    """One vocabulary entry of a decoder as the app shows tokens ("▁Paris"), plain text."""
    return show_piece(get_model(model).tokenizer.id_to_token(int(token_id)))


def is_decoder(trace: Trace) -> bool:
    return bool(trace.config.causal)


def position(shared: Shared, trace: Trace) -> int:
    """The chosen token: a decoder predicts what follows it (default the last token); an
    encoder's vector is watched (default the last real word)."""
    tokens = trace.tokens.tokens
    last = trace.n_tokens - 1
    return token_picker(
        "Token to watch" if not is_decoder(trace) else "Predict the token after",
        Beyond.token.key,
        shared.text,
        shared.visible(trace),
        tokens,
        (lambda: last)
        if is_decoder(trace)
        else lambda: default_token(tokens, trace.tokens.special_t),
        st.columns([1, 2])[0],
    )


def set_heads(labels: list[str]) -> None:
    """Choose the heads to knock out ("layer.head" labels), and keep them in the URL ("knock",
    written by ui.params before the page runs: this runs as a widget's callback)."""
    BEYOND.chosen = list(labels)
    BEYOND.knock = ",".join(labels)


def keep_chosen() -> None:
    """The menu's callback: the heads chosen, into the URL too."""
    set_heads(BEYOND.chosen or [])


def choose_heads(shared: Shared, trace: Trace) -> Heads:
    """The heads to knock out (any of the model's), kept while they exist in the model shown."""
    cfg = trace.config
    options = [f"{lay}.{h}" for lay in range(cfg.n_layers) for h in range(cfg.n_heads)]
    first = BEYOND.knock or f"{shared.layer}.{shared.head}"  # a link's, or the sidebar's
    chosen = BEYOND.chosen if BEYOND.chosen is not None else first.split(",")
    BEYOND.chosen = [h for h in chosen if h in options]
    picked = st.multiselect(
        f"Heads to knock out (any of the {len(options)})",
        options,
        key=Beyond.chosen.key,
        on_change=keep_chosen,
        format_func=label,
        placeholder="Choose heads",
    )
    return parse_heads(",".join(picked)) if picked else ()


def render(shared: Shared, trace: Trace, heads: Heads, at: int) -> None:
    """What knocking out ``heads`` changes at token ``at``."""
    if not heads:
        glossary.box("Choose at least one head to knock out.")
        return
    if is_decoder(trace):
        _prediction(shared, heads, at)
    else:
        _vector(shared, trace, heads, at)


def _prediction(shared: Shared, heads: Heads, at: int) -> None:
    change = prediction(shared.model, shared.text, heads, at)

    def words(ids: np.ndarray) -> list[str]:
        return [piece(shared.model, i) for i in ids]

    table = {
        "rank": list(range(1, change.before_ids.size + 1)),
        "with every head": words(change.before_ids),
        "p with": change.before_probs,
        "without those heads": words(change.after_ids),
        "p without": change.after_probs,
    }
    st.dataframe(
        table,
        key="bey_next",
        hide_index=True,
        column_config={"p with": show.NUM, "p without": show.NUM},
    )
    lost, gained = piece(shared.model, change.lost_id), piece(shared.model, change.gained_id)
    glossary.say(
        f"Lost most: {safe.token(lost)}, {change.lost[0]:.2%} → {change.lost[1]:.2%}. "
        f"Gained most: {safe.token(gained)}, {change.gained[0]:.2%} → {change.gained[1]:.2%}."
    )
    glossary.note(
        "How to read this: the ten likeliest next tokens after the chosen one, as the model "
        "predicts them with every head (left) and with the chosen heads switched off (right)."
    )


def _vector(shared: Shared, trace: Trace, heads: Heads, at: int) -> None:
    change = vector(shared.model, shared.text, heads, at)
    who = safe.token(trace.tokens.tokens[at])
    final = change.cosine_l.size - 1
    glossary.say(
        f"Without those heads, {who}'s vector {layer_name(final, trace.config)} has cosine "
        f"**{change.cosine_l[final]:.4f}** with its usual one (they lie "
        f"{change.distance_l[final]:.3f} apart)."
    )
    left, right = st.columns([3, 2])
    show.plot(
        make_knockout_cosine(change.cosine_l, watched=trace.tokens.tokens[at], config=trace.config),
        "bey_cosine",
        left,
    )
    table = {
        "hidden state": [layer_name(i, trace.config) for i in range(change.cosine_l.size)],
        "cosine": change.cosine_l,
        "distance": change.distance_l,
    }
    right.dataframe(
        table,
        key="bey_vector",
        hide_index=True,
        column_config={"cosine": show.FINE, "distance": show.NUM},
    )
    if change.sentence_cosine is not None:
        glossary.metric(
            "Sentence embedding: cosine with and without",
            f"{change.sentence_cosine:.4f}",
            where=right,
        )
    glossary.note(
        "How to read this: 1 means the vector did not change. Nothing changes before the first "
        "knocked head's layer; after it the change travels up. MiniLM predicts no next word, so "
        "here a head's effect is measured on vectors; pick SmolLM2 to see predictions change."
    )
