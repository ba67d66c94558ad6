"""Beyond the weights, section 4: the logit lens (a decoder's guess for the next token read after
every layer), as a layers × positions table of words and probabilities; on an encoder, a note and
a way to switch. The numbers are attention_core.methods.logit_lens's (through ui.beyond.cache)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from attention_core.core.family import Trace
from ui import glossary, router
from ui.beyond.cache import lens
from ui.beyond.knock import is_decoder, piece
from ui.cache import LABELS
from ui.router import Shared
from ui.state.beyond import Beyond

WINDOW = 16  # positions shown at most, around the chosen one
DECODER = "smollm2"  # the model to switch to for the lens


def window(at: int, n_tokens: int) -> tuple[int, ...]:
    """At most ``WINDOW`` positions around ``at``, inside 0..n_tokens-1."""
    start = max(0, min(at - WINDOW // 2, n_tokens - WINDOW))
    return tuple(range(start, min(n_tokens, start + WINDOW)))


def render(shared: Shared, trace: Trace, at: int) -> None:
    """The lens table around token ``at`` (a decoder), or why there is none (an encoder)."""
    if not is_decoder(trace):
        glossary.box(
            "The logit lens asks what the model would predict if it stopped after each layer, so "
            "it applies to a model that predicts words (a decoder, such as SmolLM2). "
            f"{LABELS[shared.model]} turns a sentence into vectors and predicts no word."
        )
        st.button(
            f"Switch to {LABELS[DECODER]}",
            key=Beyond.switch.key,
            on_click=router.use_model,
            args=(DECODER,),
        )
        return
    positions = window(at, trace.n_tokens)
    found = lens(shared.model, shared.text, positions)
    n_layers = found.top_ids_lpk.shape[0]
    tokens = trace.tokens.tokens
    rows = [f"after layer {layer}" for layer in range(n_layers)]
    rows[-1] += " = the model's prediction"
    table = pd.DataFrame(
        [
            [
                f"{piece(shared.model, found.top_ids_lpk[layer, p, 0])} "
                f"{found.top_probs_lpk[layer, p, 0]:.2f}"
                for p in range(len(positions))
            ]
            for layer in range(n_layers)
        ],
        index=rows,
        columns=[f"{p}: {tokens[p]}" for p in positions],
    )
    st.dataframe(table, key="bey_lens", height=35 * (n_layers + 1) + 3)  # every layer at once
    cut = (
        f" Positions {positions[0]} to {positions[-1]} of {trace.n_tokens} are shown, around "
        "the chosen token."
        if len(positions) < trace.n_tokens
        else ""
    )
    glossary.note(
        "How to read this: each column is a token of your sentence, each row a layer; a cell is "
        "the word the model would predict next if it stopped after that layer, and its "
        "probability. The last row is the model's own prediction. Early layers are read in a "
        "form they were never trained to produce, so their guesses are rough by design." + cut
    )
