"""Embedding shift: how context moves each token's vector, layer by layer, in one PCA plane."""

import numpy as np
import streamlit as st

from attention_core import closest_token, fit_shift_plane
from attention_core.methods.geometry import probe_cosines
from ui import downloads, params, router, safe, show
from ui.presets import auto_probes
from ui.text import verify
from ui.text.cache import read_probes
from ui.widgets import token_picker
from viz.embedding_shift import layer_name, make_embedding_shift, name_states
from viz.layer_similarity import make_layer_similarity
from viz.probe_similarity import RELATIVE, make_probe_similarity
from viz.token_trajectory import make_token_trajectory

NUM = show.SIGNED

shared = router.shared()
trace = router.require_trace(shared)
tokens, hidden = trace.tokens.tokens, trace.hidden_ltd
state = shared.layer + 1  # the hidden state the sidebar's layer hands on
now, last = layer_name(state), layer_name(len(hidden) - 1)  # "after layer 2", "after layer 5"
st.title(f"Embedding shift · {now}")
st.caption(
    "A word enters the model with a vector that no other word of the sentence has changed yet, "
    "its **embedding**: "
    + (
        "the word's own vector plus a vector for its position (so the same word in another "
        "place starts slightly differently), rescaled. "
        if trace.config.positions == "learned"
        else "the word's own vector, the same wherever it stands (this model marks positions "
        "by rotating queries and keys instead). "
    )
    + "Each layer then mixes in information from the other tokens. Layers count from 0, like the "
    f"sidebar's Layer slider: “{now}” is what layer {shared.layer} hands on. Watch the vectors "
    "move, and measure which probe words a token moves towards or away from, compared with "
    "the others."
)

session = st.session_state  # the sentence's own probes, unless the visitor edited them
session["es_probes"] = auto_probes(session["es_probes"], session.get("_es_text"), shared.text)
session["_es_text"] = shared.text
raw = st.text_input(
    "Probe words, comma-separated (at most 12, each up to 40 characters)",
    key="es_probes",
    max_chars=params.MAX_CHARS,
    help="Each probe is run through the model alone, as its own one-word sentence, and compared "
    "with the token at the same point: both embeddings, or both after one layer.",
)
probes, vectors_lpd, problems = read_probes(shared.model, raw)
for problem in problems:
    st.warning(safe.md(problem))
if not probes:
    st.info("Add at least one probe word to compare the tokens with.")

keep = shared.visible(trace)
token = token_picker(
    "Token to follow",
    "es_token",
    shared.text,
    keep,
    tokens,
    lambda: closest_token(tokens, hidden[0], vectors_lpd[0], probes),
)
params.write_url("embedding_shift")  # the probe and token defaults just chosen
focus = int(np.searchsorted(keep, token))
who = safe.token(tokens[token])

pca, tokens_lt2, probes_lp2 = fit_shift_plane(hidden, keep, vectors_lpd)
shown = [tokens[i] for i in keep]
fig = make_embedding_shift(
    tokens_lt2,
    probes_lp2,
    shown,
    probes,
    state=state,
    explained_c=pca.explained_ratio_c,
    focus=focus,
)
show.plot(fig, "es_plane")
st.caption(
    "How to read this: hollow circles are the tokens' **embeddings** ("
    + (
        "word and position"
        if trace.config.positions == "learned"
        else "the word alone: this "
        "model adds no position vector, it rotates queries and keys instead"
    )
    + ", before any layer: no context yet). Each arrow runs to the same token **after a layer**; "
    "stars are "
    "the probe words at the same point. Drag the slider or press Play to go from the embedding "
    f"to {last}; it opens {now}, the output of the sidebar's layer {shared.layer}. The plane is "
    "one PCA, fitted once on the vectors shown at every point, so the axes stay put; it keeps "
    f"{pca.explained_ratio_c.sum():.0%} of their variance, so distances here are only a shadow "
    f"of those in {hidden.shape[-1]} dimensions. The numbers below are exact."
)

if probes:
    cos = probe_cosines(hidden[:, token], vectors_lpd)
    rel0, rel, change = cos.relative_lp[0], cos.relative_lp[state], cos.change(state)
    st.subheader(f"Which probes is {who} nearer, relative to the others, before and after context?")
    left, right = st.columns([3, 2])
    fig = make_probe_similarity(rel0, rel, probes, after_label=now)
    show.plot(fig, "es_probe_bars", left)
    if len(probes) > 1:
        up, down = int(np.argmax(change)), int(np.argmin(change))
        right.markdown(
            f"From the embedding to {now}, {who} moved most towards "
            f"{safe.token(probes[up])} ({change[up]:+.3f}) and most away from "
            f"{safe.token(probes[down])} ({change[down]:+.3f}), relative to the "
            "other probes."
        )
    else:
        right.info("With one probe the relative measure is always 0: add another to compare.")
    right.caption(
        f"How to read this: the cosine of {who} with each probe, minus its average over all the "
        f"probes, in the embedding (blue) and {now} (orange). The probes pass through the model "
        "too, so every raw cosine drifts with them (their average goes from "
        f"{cos.mean_l[0]:.3f} to {cos.mean_l[state]:.3f}); subtracting the average removes that "
        f"shared drift. An orange bar above the blue one means context moved {who} towards that "
        "probe, compared with the other probes."
    )
    table = {
        "relative · embedding": rel0,
        f"relative · {now}": rel,
        "relative change": change,
        "raw cosine · embedding": cos.raw_lp[0],
        f"raw cosine · {now}": cos.raw_lp[state],
    }
    st.dataframe(
        {"probe": probes} | table,
        key="es_table",
        hide_index=True,
        column_config=dict.fromkeys(table, NUM),
    )
    st.caption(
        "relative = cosine − mean over the probes (the bars); raw cosine = before "
        "subtracting that mean."
    )
    downloads.csv_button(
        "cosines.csv",
        np.stack(list(table.values()), axis=1),
        probes,
        list(table),
        f"probe_cosines_{now.replace(' ', '_')}.csv",
        key="es_csv",
    )

st.subheader(f"The path of {who} through the layers")
left, right = st.columns(2)
fig = make_token_trajectory(
    tokens_lt2[:, focus],
    tokens[token],
    probes_lp2[state],
    probes,
    probe_state=state,
    explained_c=pca.explained_ratio_c,
)
show.plot(fig, "es_trajectory", left)
left.caption(
    f"How to read this: dot E is the embedding of {who}; dot N is {who} after layer N, up to "
    f"{last}, in the same PCA plane as above. Stars are the probes {now}."
)
if probes:
    fig = make_layer_similarity(
        {p: cos.relative_lp[:, j] for j, p in enumerate(probes)}, mark_layer=state
    )
    show.plot(name_states(fig, RELATIVE), "es_probe_lines", right)
    right.caption(
        f"How to read this: the same measure as the bars (cosine of {who} with each probe minus "
        f"the average over the probes) at every point from the embedding to {last}. The dotted "
        f"line is {now}, shown above."
    )

with st.expander("For engineers", expanded=False):
    st.markdown(
        "- Hidden states: `hidden_ltd[0]` is the embedding ("
        + (
            "word + position + segment embeddings, LayerNormed"
            if trace.config.family == "bert"
            else "the word embedding row; the last state is after the final RMSNorm"
        )
        + f": what layer 0 receives); `hidden_ltd[l]` is the output of layer "
        f"l − 1, so the sidebar's layer {shared.layer} is `hidden_ltd[{state}]`.\n"
        "- Probes: `embed_words` runs each probe alone (`[CLS] word [SEP]`) and averages its "
        "word pieces at every state, `[l, p, d]`.\n"
        "- Bars, table and lines: `attention_core.methods.geometry.probe_cosines(hidden_ltd[:, t], "
        "probes_lpd)`: `raw_lp` are the cosines at the same state, `mean_l` their mean over the "
        "probes, `relative_lp = raw_lp - mean_l[:, None]` (unchanged by any shift shared by all "
        "probes at a state), `change(l) = relative_lp[l] - relative_lp[0]`.\n"
        f"- Plane: `fit_shift_plane`, one PCA (SVD) over the kept tokens and the probes at all "
        f"{len(hidden)} states, `hidden_ltd[0]` to `hidden_ltd[{len(hidden) - 1}]`."
    )
verify.button(shared, trace)  # run the sentence through the reference library
