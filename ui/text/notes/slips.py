"""The notes' examples page: the notes' slips, each quoted in the notes' own words and then
corrected with a number from the sidebar's model (the context window's is in select.context).

Every number is the engine's (attention_core.lessons.notes_slips), formatted here;
tests/app/test_page_notes.py checks each sentence's claim against the engine."""

from __future__ import annotations

from attention_core.lessons.notes_slips import PIECES_WORD, ModelSizes, model_sizes
from ui import glossary, safe
from ui.cache import LABELS, get_trace
from ui.text.notes.tables import config, quote

VALUE_SLIP = (
    "The final matrix takes embedded vector E s and translates them to a higher dimensional "
    "context space."
)
EMBEDDING_SLIP = (
    "The first encoding layer typically uses positional encoding + static embeddings from "
    "Word2Vec or GLoVE"
)


def sizes(model: str) -> ModelSizes:
    return model_sizes(config(model), get_trace(model, PIECES_WORD))


def value_slip(model: str) -> None:
    """A value vector is smaller than a token's vector, not larger."""
    s = sizes(model)
    glossary.say(f"The notes, on the value matrix: “{VALUE_SLIP}”")
    glossary.say(
        f"A gentle correction: the value vector is smaller, not larger. On {LABELS[model]} a "
        f"token's vector E has **{s.d_model}** numbers, and each head's value vector has "
        f"**{s.d_head}** ({s.d_model} ÷ {s.n_heads} heads). The {s.n_heads} heads' results side "
        f"by side make {s.d_head * s.n_heads} numbers again, and one more learned matrix, W_O, "
        "turns them into the update added to E (section 1 shows it on one head)."
    )


def embedding_slip(model: str) -> None:
    """The model's embedding table is its own, learned with it; positions as the model has them."""
    s, cfg = sizes(model), config(model)
    pieces = " · ".join(safe.md(p) for p in s.pieces)
    glossary.say(f"The notes, on the first layer's input: “{EMBEDDING_SLIP}”.")
    if cfg.positions == "learned":
        positions = (
            f"The positions are learned too: a table of {cfg.n_positions} position vectors, "
            "one added to each token's row."
        )
    else:
        positions = (
            "No position vector is added at all: the position turns each head's queries and "
            "keys instead (rotary positions)."
        )
    glossary.say(
        f"A gentle correction, for these models: {LABELS[model]}'s embedding table is its own, "
        f"**{s.vocab:,}** rows of **{s.d_model}** numbers, one row per word piece of its own "
        f"vocabulary ({quote(PIECES_WORD)} is {len(s.pieces)} rows: {pieces}). Its rows were "
        "learned in training together with the rest of its weights, W_Q, W_K and W_V "
        f"included; no Word2Vec or GloVe table is used. {positions}"
    )
