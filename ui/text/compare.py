"""Compare sentences (pages/compare.py): two sentences typed on the page, each drawn on the
sidebar's head, and one word they share followed through the layers (its two vectors' cosine)."""

from __future__ import annotations

import streamlit as st

from attention_core import cosine, shared_words, word_positions, word_vectors
from attention_core.core.family import Trace
from ui import downloads, explore, glossary, params, router, safe, show
from ui.cache import get_trace, model_error
from ui.presets import MONEY_BANK, RIVER_BANK
from ui.state.text import COMPARE, Compare
from viz.embedding_shift import layer_name
from viz.layer_similarity import make_layer_similarity

LEAD = (
    "The same word can mean different things. Type two sentences that share a word and see how "
    "one head reads each of them, and how far apart the word's vectors drift as the layers add "
    "context. (The sidebar's layer and head apply here; its sentence does not.)"
)
BOXES = {"A": Compare.a, "B": Compare.b}  # each sentence's box


def require_model(model: str) -> None:
    """A message and a stopped page when the model cannot load."""
    error = model_error(model)
    if error:
        st.error(f"The model could not be loaded. {error}")
        st.stop()


def _sentence(shared: router.Shared, name: str) -> Trace | None:
    """Sentence ``name``'s box, and its pattern on the sidebar's head (None when there is none)."""
    box = BOXES[name]
    text = st.text_input(f"Sentence {name}", key=box.key, max_chars=params.MAX_CHARS)
    if not text.strip():
        glossary.box(f"Type sentence {name} to see its attention pattern here.")
        return None
    with st.spinner(f"Running the model on sentence {name}…"):
        trace = get_trace(shared.model, text)
    if trace.tokens.special_t.all():
        glossary.box(
            f"Sentence {name} holds only invisible or control characters: the model "
            "reads no word in it. Type a sentence."
        )
        return None
    if notice := router.cut_notice(trace):
        st.warning(f"Sentence {name}: {notice}")
    explore.shared_only(  # the same head side by side: only layer and head to change
        trace,
        shared.model,
        text,
        Compare.PATTERN + name.lower(),
        stages=("pattern",),
        controls=("layer", "head"),
    )
    glossary.note(
        "How to read this: row = the attending token (query), column = the token it reads "
        "(key); each row sums to 1. The layer and head follow the sidebar; ← → change the "
        "head of both sentences."
    )
    return trace


def sentences(shared: router.Shared) -> dict[str, Trace]:
    """Both sentences side by side; the traces of those the model reads."""
    traces = {}
    for name, col in zip(BOXES, st.columns(2), strict=True):
        with col:
            trace = _sentence(shared, name)
        if trace is not None:
            traces[name] = trace
    return traces


def _shared_word(a: Trace, b: Trace) -> str:
    """The word menu (its choice kept while both sentences have it), or a stopped page."""
    options = shared_words(a.tokens.tokens, b.tokens.tokens)
    if not options:
        glossary.box(
            "The two sentences share no word, so there is no word to follow from one to the "
            f"other. Use the same word in both, for example “bank” in “{RIVER_BANK}” and "
            f"“{MONEY_BANK}”."
        )
        st.stop()
    if COMPARE.word not in options:
        COMPARE.word = "bank" if "bank" in options else options[0]
    st.selectbox(
        "Shared word",
        options,
        key=Compare.word.key,
        help="Words in both sentences; the first occurrence.",
    )
    return COMPARE.word


def _starts(a: Trace, cos_0: float, pos_a: tuple[int, ...], pos_b: tuple[int, ...]) -> str:
    """What the cosine before any layer says (position vectors, or none)."""
    where = f"position {', '.join(map(str, pos_a))} in A and {', '.join(map(str, pos_b))} in B"
    if a.config.positions != "learned":  # rotary: positions turn queries and keys, not the input
        return (
            f"In the embeddings (before any layer) the cosine is {cos_0:.3f}: the word's own "
            f"vector, the same in both ({where}), since this model adds no position vector; it "
            "marks positions by rotating queries and keys inside each layer."
        )
    if pos_a != pos_b:
        return (
            f"In the embeddings (before any layer) the cosine is {cos_0:.3f}: the word "
            f"embedding is the same in both, and the only difference is that the word sits at "
            f"{where}, so different position embeddings were added before the LayerNorm."
        )
    return (
        f"In the embeddings the cosine is {cos_0:.3f}: same word at the same position "
        f"({where}), so the vectors the model starts from are identical."
    )


def one_word(shared: router.Shared, traces: dict[str, Trace]) -> None:
    """The shared word's two vectors compared after every layer (a chart, a table, a file)."""
    if len(traces) < 2:
        glossary.box("Type both sentences above to compare a word they share.")
        st.stop()
    a, b = traces["A"], traces["B"]
    word = _shared_word(a, b)
    pos_a, pos_b = word_positions(a.tokens.tokens, b.tokens.tokens, word)
    cos_l = cosine(word_vectors(a.hidden_ltd, pos_a), word_vectors(b.hidden_ltd, pos_b))  # [l]
    after, w = shared.layer + 1, safe.token(word)  # hidden state index of "after layer {layer}"
    fig = make_layer_similarity({f"{word}: A vs B": cos_l}, mark_layer=after, config=a.config)
    left, right = st.columns([3, 1])
    show.plot(fig, "cmp_similarity", left)
    glossary.note(
        f"How to read this: cosine similarity between {w} in sentence A and {w} in sentence B "
        f"(mean over its word pieces), after each layer. {_starts(a, cos_l[0], pos_a, pos_b)} "
        "Every change after that comes from context: attention mixing in the other words. The "
        f"dotted line is {layer_name(after, a.config)}, the sidebar's layer.",
        where=left,
    )
    labels = [layer_name(i, a.config) for i in range(len(cos_l))]
    right.dataframe(
        {"layer": labels, "cosine": cos_l},
        key="cmp_table",
        hide_index=True,
        column_config={"cosine": st.column_config.NumberColumn(format="%.3f")},
    )
    with right:
        downloads.csv_button(
            "cosines.csv", cos_l[:, None], labels, ["cosine"], "compare_cosine.csv", key="cmp_csv"
        )
