"""Embedding shift: how context moves each token's vector, layer by layer, in one PCA plane."""

import numpy as np
import streamlit as st

from attention_core import closest_token, cosine, fit_shift_plane, parse_probes
from ui import downloads, params, safe, sidebar
from ui.embedding_shift_cache import probe_vectors
from ui.presets import probes_for
from viz.embedding_shift import layer_name, make_embedding_shift
from viz.layer_similarity import make_layer_similarity
from viz.probe_similarity import make_probe_similarity
from viz.token_trajectory import make_token_trajectory

shared = sidebar.shared()
trace = sidebar.require_trace(shared)
tokens, hidden = trace.tokens.tokens, trace.hidden_ltd
after = shared.layer + 1  # hidden_ltd index of the sidebar block's output
st.title(f"Embedding shift · after layer {shared.layer}")
st.caption(
    "A word enters the model with one fixed vector, whatever the sentence. Each block then mixes "
    "in information from the other tokens. Watch the vectors move, and see whether a word like "
    "“bank” drifts towards “river” or towards “money”."
)

previous = st.session_state.get("_es_text")
if previous != shared.text:  # a new sentence: its preset probes, unless the probes were edited
    if st.session_state["es_probes"] == ", ".join(probes_for(previous or "")):
        st.session_state["es_probes"] = ", ".join(probes_for(shared.text))
    if previous is not None:
        st.session_state["es_token"] = -1
    st.session_state["_es_text"] = shared.text
raw = st.text_input("Probe words, comma-separated (at most 12, each up to 40 characters)",
                    key="es_probes", max_chars=params.MAX_CHARS, help="Each probe is run "
                    "through the model alone, as its own one-word sentence, and compared at the "
                    "same layer.")  # fmt: skip
probes, problems = parse_probes(raw)
probes, vectors_lpd, unreadable = probe_vectors(shared.model, tuple(probes))
if unreadable:
    problems.append(f"Dropped {', '.join(unreadable)}: the model reads no word pieces in them.")
for problem in problems:
    st.warning(safe.md(problem))
if not probes:
    st.info("Add at least one probe word to compare the tokens with.")

keep = shared.visible(trace)
keep = keep if keep.size else np.arange(trace.n_tokens)
if st.session_state.get("es_token", -1) not in keep:
    st.session_state["es_token"] = closest_token(tokens, hidden[0], vectors_lpd[0], probes)
    if st.session_state["es_token"] not in keep:
        st.session_state["es_token"] = int(keep[0])
params.write_url("embedding_shift")  # the probe and token defaults just chosen
token = st.selectbox("Token to follow", keep.tolist(), key="es_token",
                     format_func=lambda i: f"{i}: {tokens[i]}")  # fmt: skip
focus = int(np.searchsorted(keep, token))
who = safe.token(tokens[token])

pca, tokens_lt2, probes_lp2 = fit_shift_plane(hidden, keep, vectors_lpd)
shown = [tokens[i] for i in keep]
fig = make_embedding_shift(tokens_lt2, probes_lp2, shown, probes, layer=after,
                           explained_c=pca.explained_ratio_c, focus=focus)  # fmt: skip
st.plotly_chart(fig, key="es_plane", config={"displaylogo": False})
share = float(pca.explained_ratio_c.sum())
st.caption(
    "How to read this: hollow circles are **static embeddings** (`hidden_ltd[0]`: word + position "
    "+ segment embeddings, LayerNormed — what the first block receives; no context yet). Each "
    "arrow runs to the token's **contextual vector at layer L** (`hidden_ltd[L]`, after L blocks, "
    "L = 1…6); stars are the probe words at the same layer. Drag the slider or press Play to go "
    f"through layers 0…6; it opens on layer {after}, the output of the sidebar's block "
    f"{shared.layer}. The plane is one PCA, fitted once on every layer's vectors of the tokens "
    f"shown plus the probes, so the axes stay put; it keeps {share:.0%} of their variance, so "
    "distances here are only a shadow of those in 384 dimensions — the cosines below are exact."
)

if probes:
    st.subheader(f"Is {who} closer to the probes before or after context?")
    before_p = cosine(hidden[0, token], vectors_lpd[0])  # [d] vs [p,d] -> [p]
    after_p = cosine(hidden[after, token], vectors_lpd[after])
    label = f"layer {layer_name(after)}"
    left, right = st.columns([3, 2])
    fig = make_probe_similarity(before_p, after_p, probes, after_label=label)
    left.plotly_chart(fig, key="es_probe_bars", config={"displaylogo": False})
    left.caption(
        f"How to read this: cosine similarity of {who} with each probe word, both taken at the "
        f"same layer: static embeddings (layer 0), then vectors after {after} block(s). A taller "
        "orange bar means context pushed the token towards that probe."
    )
    right.dataframe({"probe": probes, "static (layer 0)": before_p, label: after_p,
                     "change": after_p - before_p}, key="es_table", hide_index=True)  # fmt: skip
    with right:
        downloads.csv_button("cosines.csv", np.stack([before_p, after_p], axis=1), probes,
                             ["static (layer 0)", label], f"probe_cosines_L{after}.csv",
                             key="es_csv")  # fmt: skip

st.subheader(f"The path of {who} through the layers")
left, right = st.columns(2)
fig = make_token_trajectory(tokens_lt2[:, focus], tokens[token], probes_lp2[after], probes,
                            probe_layer=after, explained_c=pca.explained_ratio_c)  # fmt: skip
left.plotly_chart(fig, key="es_trajectory", config={"displaylogo": False})
left.caption(
    f"How to read this: the numbered dots are {who} at layer 0 (static) to 6, in the same PCA "
    f"plane as above; stars are the probes at layer {after}."
)
if probes:
    cos_lp = cosine(hidden[:, token][:, None], vectors_lpd)  # [l,1,d] vs [l,p,d] -> [l,p]
    fig = make_layer_similarity({p: cos_lp[:, j] for j, p in enumerate(probes)}, mark_layer=after)
    right.plotly_chart(fig, key="es_probe_lines", config={"displaylogo": False})
    right.caption(
        f"How to read this: cosine of {who} with each probe, both at the same layer, for layers "
        f"0 (static) to 6. The dotted line is layer {after}, shown above."
    )
