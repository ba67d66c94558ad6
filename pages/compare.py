"""Compare two sentences: the same head's patterns side by side, and one shared word's
contextual vectors compared layer by layer."""

import streamlit as st

from attention_core import cosine, shared_words, word_positions, word_vectors
from ui import downloads, explore, params, router, safe, show
from ui.cache import get_trace, model_error
from ui.presets import MONEY_BANK, RIVER_BANK
from viz.embedding_shift import layer_name
from viz.layer_similarity import make_layer_similarity

shared = router.shared()
layer, head = shared.layer, shared.head
st.title(f"Compare two sentences · layer {layer}, head {head}")
st.caption(
    "The same word can mean different things. Type two sentences that share a word and see how "
    "one head reads each of them, and how far apart the word's vectors drift as the layers add "
    "context. (The sidebar's layer and head apply here; its sentence does not.)"
)
error = model_error(shared.model)
if error:
    st.error(f"The model could not be loaded. {error}")
    st.stop()

traces = {}
for name, col in zip("AB", st.columns(2), strict=True):
    with col:
        text = st.text_input(
            f"Sentence {name}", key=f"cmp_{name.lower()}", max_chars=params.MAX_CHARS
        )
        if not text.strip():
            st.info(f"Type sentence {name} to see its attention pattern here.")
            continue
        with st.spinner(f"Running the model on sentence {name}…"):
            trace = get_trace(shared.model, text)
        if trace.tokens.special_t.all():
            st.info(
                f"Sentence {name} holds only invisible or control characters: the model "
                "reads no word in it. Type a sentence."
            )
            continue
        traces[name] = trace
        if trace.tokens.n_cut:
            st.warning(
                f"Sentence {name} has {trace.n_tokens + trace.tokens.n_cut} tokens; the model "
                f"reads at most {trace.n_tokens}, so the last {trace.tokens.n_cut} were cut."
            )
        explore.shared_only(  # the same head side by side: only layer and head to change
            trace,
            shared.model,
            text,
            f"cmp_pattern_{name.lower()}",
            stages=("pattern",),
            controls=("layer", "head"),
        )
        st.caption(
            "How to read this: row = the attending token (query), column = the token it reads "
            "(key); each row sums to 1. The layer and head follow the sidebar; ← → change the "
            "head of both sentences."
        )

st.subheader("One word, two contexts")
if len(traces) < 2:
    st.info("Type both sentences above to compare a word they share.")
    st.stop()
a, b = traces["A"], traces["B"]
options = shared_words(a.tokens.tokens, b.tokens.tokens)
if not options:
    st.info(
        "The two sentences share no word, so there is no word to follow from one to the other. "
        f"Use the same word in both, for example “bank” in “{RIVER_BANK}” and “{MONEY_BANK}”."
    )
    st.stop()
if st.session_state.get("cmp_word") not in options:
    st.session_state["cmp_word"] = "bank" if "bank" in options else options[0]
word = st.selectbox(
    "Shared word", options, key="cmp_word", help="Words in both sentences; the first occurrence."
)
pos_a, pos_b = word_positions(a.tokens.tokens, b.tokens.tokens, word)
cos_l = cosine(word_vectors(a.hidden_ltd, pos_a), word_vectors(b.hidden_ltd, pos_b))  # [l]
after = layer + 1  # hidden state index of "after layer {layer}"

w = safe.token(word)
fig = make_layer_similarity({f"{word}: A vs B": cos_l}, mark_layer=after)
left, right = st.columns([3, 1])
show.plot(fig, "cmp_similarity", left)
where = f"position {', '.join(map(str, pos_a))} in A and {', '.join(map(str, pos_b))} in B"
if a.config.positions != "learned":  # rotary: positions turn queries and keys, not the input
    layer0 = (
        f"In the embeddings (before any layer) the cosine is {cos_l[0]:.3f}: the word's own "
        f"vector, the same in both ({where}), since this model adds no position vector; it marks "
        "positions by rotating queries and keys inside each layer."
    )
elif pos_a != pos_b:
    layer0 = (
        f"In the embeddings (before any layer) the cosine is {cos_l[0]:.3f}: the word embedding "
        f"is the same in both, and the only difference is that the word sits at {where}, so "
        "different position embeddings were added before the LayerNorm."
    )
else:
    layer0 = (
        f"In the embeddings the cosine is {cos_l[0]:.3f}: same word at the same position "
        f"({where}), so the vectors the model starts from are identical."
    )
left.caption(
    f"How to read this: cosine similarity between {w} in sentence A and {w} in sentence B "
    f"(mean over its word pieces), after each layer. {layer0} Every change after that comes "
    f"from context: attention mixing in the other words. The dotted line is after layer {layer}, "
    f"the sidebar's layer."
)
labels = [layer_name(i) for i in range(len(cos_l))]
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
