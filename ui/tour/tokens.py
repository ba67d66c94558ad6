"""Step: tokens and static embeddings: the same word gets the same vector in every sentence."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core import ModelConfig, Trace, cosine
from attention_core.demos import repeated_word
from ui import safe
from ui.cache import get_trace
from ui.router import Shared
from ui.tour.common import BANK_A, BANK_B, chart, engineers, view
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
    st.markdown(text(cfg))
    keep, tokens = view(shared, trace)
    pieces = " · ".join(safe.token(t) for t in trace.tokens.tokens)
    st.markdown(f"Your sentence is **{trace.n_tokens} tokens**: {pieces}")
    chart(
        make_embedding_strip(trace.word_td[keep], tokens, title="static embeddings"),
        "learn_strip",
        f"How to read this: one row per token, one coloured cell per dimension ({cfg.d_model} "
        "of them). Red cells are positive, blue negative. These are the rows of the lookup "
        "table, before anything has been mixed in.",
    )
    st.markdown(
        "Try it with the word *bank*: in the two sentences below it is the same token, so the "
        "lookup returns exactly the same vector (cosine 1). Only after the "
        f"{cfg.n_layers} layers of attention do the two vectors part ways."
    )
    a, b = get_trace(shared.model, BANK_A), get_trace(shared.model, BANK_B)
    ia, ib = a.tokens.tokens.index("bank"), b.tokens.tokens.index("bank")
    wa, wb = a.word_td[ia], b.word_td[ib]
    static = float(cosine(wa, wb))
    after = float(cosine(a.hidden_ltd[-1, ia], b.hidden_ltd[-1, ib]))
    c1, c2 = st.columns(2)
    c1.metric("“bank”: cosine of the static vectors", f"{static:.4f}")
    c2.metric(f"“bank”: cosine after all {cfg.n_layers} layers", f"{after:.4f}")
    st.latex(
        rf"\cos(\vec E^{{A}}_{{\text{{bank}}}}, \vec E^{{B}}_{{\text{{bank}}}}) = "
        rf"\frac{{{float(wa @ wb):.4f}}}{{{np.linalg.norm(wa):.4f} \times "
        rf"{np.linalg.norm(wb):.4f}}} = {static:.4f}"
    )
    st.caption(f"A = “{BANK_A}”, B = “{BANK_B}”.")
    twin = repeated_word(trace)
    if twin is not None:
        st.markdown(
            f"In your sentence {safe.token(trace.tokens.tokens[twin.first])} appears at "
            f"positions {twin.first} and {twin.second}: static cosine **{twin.static_cos:.4f}**, "
            f"after the {cfg.n_layers} layers **{twin.context_cos:.4f}**."
        )
    with engineers():
        st.markdown(
            "Static vectors: `trace.word_td[t]` (the rows of "
            "`embeddings.word_embeddings.weight`); after the layers: `trace.hidden_ltd[-1, t]`; "
            "the repeated word: `attention_core.demos.repeated_word(trace)`."
        )
