"""Inside a decoder: SmolLM2's own causal mask, the notes' word table on a real head, rotary
positions beside MiniLM's learned ones, grouped key/value heads, next-token guesses."""

import numpy as np
import pandas as pd
import streamlit as st

from attention_core.methods.decoder_heads import group_similarity
from ui import router, show
from ui.cache import get_model, get_trace, model_error
from ui.text import decoder
from viz.pattern_heatmap import make_pattern_heatmap

MODEL = decoder.MODEL  # the sidebar shows it here (ui.registry: the page's models)
shared = router.shared()
st.title("Inside a decoder")
if error := model_error(MODEL) or model_error("minilm"):
    st.error(f"A model could not be loaded. {error}")
    st.stop()
cfg = get_model(MODEL).config
st.caption(
    "This page is made for SmolLM2-135M-Instruct, a decoder, so the sidebar shows it here "
    f"(MiniLM appears where the two compare). Your sentence, the layer (of {cfg.n_layers}) and "
    f"the head (of {cfg.n_heads}) come from the sidebar. {decoder.QUANTIZED}"
)
if not shared.text.strip():
    st.info("Type a sentence in the sidebar (or pick an example) to look inside the decoder.")
    st.stop()
trace = get_trace(MODEL, shared.text)
tokens, n = trace.tokens.tokens, trace.n_tokens
if trace.tokens.n_cut:
    st.warning(f"The decoder reads the first {n} tokens; the last {trace.tokens.n_cut} were cut.")
layer, head = shared.layer, shared.head

st.subheader("1 · Each token sees only the tokens before it")
pattern = trace.pattern_lhqk[layer, head]
show.plot(
    make_pattern_heatmap(pattern, list(tokens), title=f"layer {layer}, head {head}"), "dec_pattern"
)
st.caption(
    f"Rows are queries, columns keys. Every weight above the diagonal is exactly "
    f"{np.triu(pattern, 1).max():g}: SmolLM2 was trained with this mask, because it learns to "
    "guess each next token and must not see it. MiniLM, an encoder, reads both ways; the causal "
    "switch on the Attention pattern page is a what-if it was never trained for."
)

st.subheader("2 · The notes' “Dirty Quantum Plumbing” head, on a real decoder")
decoder.note_table(MODEL)

st.subheader("3 · Positions: rotated, not added")
st.caption(
    "MiniLM adds a learned position vector to each token. SmolLM2 adds nothing: it turns each "
    "query and key by an angle that grows with the position, so a score depends on how far "
    "apart two tokens are, not where they stand."
)
decoder.positions(trace, layer, head)

st.subheader("4 · Query heads that share a key and a value")
group = cfg.n_heads // cfg.n_kv_heads
st.dataframe(
    {
        "key/value head": list(range(cfg.n_kv_heads)),
        "query heads reading it": [
            ", ".join(map(str, range(g * group, (g + 1) * group))) for g in range(cfg.n_kv_heads)
        ],
    },
    key="dec_groups",
    hide_index=True,
)
heads = [f"H{h}" for h in range(cfg.n_heads)]
sim = group_similarity(trace.pattern_lhqk[layer], cfg.n_kv_heads)
st.markdown(
    f"SmolLM2 has {cfg.n_heads} query heads but only {cfg.n_kv_heads} key/value heads: each "
    f"group of {group} asks its own questions (queries) of the same keys and takes the same "
    f"values, so the KV cache is {group}× smaller. In layer {layer} on your sentence, two heads "
    f"of one group share **{sim.within:.0%}** of their attention on average, two heads of "
    f"different groups **{sim.across:.0%}**."
)
st.dataframe(
    pd.DataFrame(sim.overlap_hh, index=heads, columns=heads),
    key="dec_overlap",
    column_config={f"H{h}": show.NUM for h in range(cfg.n_heads)},
)
st.caption(
    "Attention in common, Σ min(p, p′) over the keys, averaged over the queries: row and "
    "column are heads H0…H8 (1 = the same pattern)."
)

st.subheader("5 · What it guesses next, at every position")
rows = {"token": list(tokens), "actually next": [*tokens[1:], "—"]}
for r in range(3):
    rows[f"guess {r + 1}"] = [decoder.piece(i) for i in trace.next_top_ids_tk[:, r]]
    rows[f"p{r + 1}"] = trace.next_top_probs_tk[:, r]
st.dataframe(rows, key="dec_next", column_config={f"p{r}": show.NUM for r in (1, 2, 3)})
st.caption(
    "Each row: after reading up to this token (and only up to it), the model's three "
    "likeliest next tokens and their probabilities; compare with the token that follows."
)
with st.expander("For engineers"):
    st.code(
        f"{cfg.name}: {cfg.n_layers} layers, {cfg.n_heads} query heads, {cfg.n_kv_heads} KV "
        f"heads, d_head {cfg.d_head}, RoPE base {cfg.rope_theta:g}, {cfg.quantization} weights\n"
        f"pattern {pattern.shape}, rows sum to 1 within {np.abs(pattern.sum(1) - 1).max():.1e}\n"
        f"q (after RoPE) {trace.q_lhqe[layer].shape}, KV per group {trace.k_lgke[layer].shape}",
        language=None,
    )
