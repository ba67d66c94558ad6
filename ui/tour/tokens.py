"""Step: tokens and static embeddings: the same word gets the same vector in every sentence."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core import ModelConfig
from attention_core.core.family import Trace
from attention_core.lessons.demos import Parting, parting, repeated_word
from ui import glossary, safe
from ui.router import Shared
from ui.tour.common import BANK_A, BANK_B, THREE, bank_pair, chart, engineers, layers, view
from viz.embedding_shift import layer_name
from viz.learn_strip import make_embedding_strip

TITLE = "Tokens and static embeddings"
PAGE = "compare"  # the page that explores this step further (ui.registry)


def text(cfg: ModelConfig) -> str:
    return (
        "The model never sees letters. A tokenizer cuts the text into pieces from a fixed "
        f"vocabulary of {cfg.vocab_size:,} (rare words split into several, the later ones marked "
        "##) and adds two markers, [CLS] at the start and [SEP] at the end. Each piece is then "
        f"replaced by one row of a big lookup table: a list of {cfg.d_model} numbers, its static "
        "embedding. The lookup ignores the neighbours, so a word gets the same vector in every "
        "sentence — the problem attention solves."
    )


def render(shared: Shared, trace: Trace) -> None:
    cfg = trace.config
    glossary.say(text(cfg))
    keep, tokens = view(shared, trace)
    pieces = " · ".join(safe.token(t) for t in trace.tokens.tokens)
    glossary.say(f"Your sentence is **{trace.n_tokens} tokens**: {pieces}")
    chart(
        make_embedding_strip(trace.word_td[keep], tokens, title="static embeddings"),
        "learn_strip",
        f"How to read this: one row per token, one coloured cell per dimension ({cfg.d_model} "
        "of them). Red cells are positive, blue negative. These are the rows of the lookup "
        "table, before anything has been mixed in.",
    )
    _bank(shared, cfg)
    twin = repeated_word(trace)
    if twin is not None:
        glossary.say(
            f"In your sentence {safe.token(trace.tokens.tokens[twin.first])} appears at "
            f"positions {twin.first} and {twin.second}: static cosine **{twin.static_cos:.3f}**, "
            f"after the {cfg.n_layers} layers **{twin.context_cos:.3f}**."
        )
    with engineers():
        st.markdown(
            "Static vectors: `trace.word_td[t]` (the rows of "
            "`embeddings.word_embeddings.weight`); after the layers: `trace.hidden_ltd[-1, t]`; "
            "the repeated word: `attention_core.lessons.demos.repeated_word(trace)`; the two "
            "“bank”s "
            "state by state: `attention_core.lessons.demos.parting(a, ia, b, ib)` "
            "(`trace.hidden_ltd[s]`, "
            "s = 0 the embedding)."
        )


def bank_text(cut: Parting, ia: int, ib: int) -> str:
    """What the two “bank”s do, state by state, in words read off the numbers."""
    cos, drop = cut.cos_s, cut.drop_l
    big = cut.largest_drop
    rises = [int(x) for x in np.flatnonzero(drop < 0)]
    steady = (
        f"It does not fall steadily: it rises again across {layers(rises)}"
        if rises
        else "It falls across every layer"
    )
    return (
        "Try it with the word *bank*: in the two sentences below it is the same token, so the "
        f"lookup returns exactly the same vector (cosine **{cos[0]:.3f}**). The two part ways "
        f"before any attention: a position vector is added to each (position {ia} in A, {ib} "
        f"in B), so at the input of layer 0 their cosine is already **{cos[1]:.3f}**. The "
        f"largest single drop is across layer {big} ({cos[big + 1]:.3f} → {cos[big + 2]:.3f}). "
        f"{steady}, and ends at **{cos[-1]:.3f}** after the last layer."
    )


def _bank(shared: Shared, cfg: ModelConfig) -> None:
    """“bank” by the river and at the deposit: static vectors, then every layer."""
    a, ia, b, ib = bank_pair(shared.model)
    wa, wb = a.word_td[ia], b.word_td[ib]
    cut = parting(a, ia, b, ib)
    glossary.say(bank_text(cut, ia, ib))
    c1, c2 = st.columns(2)
    glossary.metric("“bank”: cosine of the static vectors", f"{cut.cos_s[0]:.3f}", where=c1)
    glossary.metric(
        f"“bank”: cosine after all {cfg.n_layers} layers", f"{cut.cos_s[-1]:.3f}", where=c2
    )
    st.latex(
        rf"\cos(\vec E^{{A}}_{{\text{{bank}}}}, \vec E^{{B}}_{{\text{{bank}}}}) = "
        rf"\frac{{{float(wa @ wb):.3f}}}{{{np.linalg.norm(wa):.3f} \times "
        rf"{np.linalg.norm(wb):.3f}}} = {cut.cos_s[0]:.3f}"
    )
    states = ["static vectors", *[layer_name(s) for s in range(cfg.n_layers + 1)]]
    st.dataframe(
        {
            "“bank” in A and B": states,
            "cosine": cut.cos_s,
            "change across the layer": [None, None, *(-cut.drop_l)],
        },
        key="learn_bank_split",
        hide_index=True,
        column_config={"cosine": THREE, "change across the layer": THREE},
    )
    glossary.note(
        f"A = “{BANK_A}”, B = “{BANK_B}”. How to read this: the cosine of the two “bank” "
        "vectors at each stage (1 = pointing the same way); “embedding” is the input of "
        "layer 0, with the position added; a negative change means the layer pulled them apart."
    )
