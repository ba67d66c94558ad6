"""Step: decoder and cross-attention, shown with one borrowed encoder layer (illustrative)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core import DecoderTrace, ModelConfig, Trace
from ui import cache
from ui.router import Shared
from ui.show import NUM
from ui.tour.common import chart, engineers
from viz.learn_cross import make_cross_pattern
from viz.pattern_heatmap import make_pattern_heatmap

TITLE = "Decoder and cross-attention"
PAGE = "build_head"  # the page that explores this step further (ui.registry)
HINT = "switch on its causal mask"  # what to do there
TAG = "illustrative"


def text(cfg: ModelConfig, layer: int) -> str:
    return (
        "MiniLM is an encoder only: it reads a whole sentence and was never trained to write "
        "one. A translation model pairs an encoder with a decoder, whose layers have two kinds "
        "of attention with weights of their own. MiniLM has no such weights, so this "
        f"demonstration reuses one encoder layer's weights (layer {layer}, the sidebar's) for "
        "both the masked self-attention and the cross-attention. The arithmetic is real; the "
        f"patterns are {TAG}: no model was trained to attend this way."
    )


STEPS = (
    "1. **Masked self-attention** on the target sentence: each target token looks only at "
    "itself and the tokens before it.  \n"
    "2. **Cross-attention**: queries come from the target tokens, keys and values from the "
    "source sentence as the encoder (all of MiniLM's layers) left it."
)


def render(shared: Shared, trace: Trace) -> None:
    layer, head, e = shared.layer, shared.head, trace.config.d_head
    st.info(text(trace.config, layer), icon=":material/info:")
    c1, c2 = st.columns(2)
    source = c1.text_input("Source sentence (read by the encoder)", key="learn_src")
    target = c2.text_input("Target sentence (read by the decoder)", key="learn_tgt")
    if not source.strip() or not target.strip():
        st.info("Type both a source and a target sentence to run the demonstration.")
        return
    dec = cache.decoder(shared.model, source, target, layer)
    for name, toks in (("source", dec.source), ("target", dec.target)):
        if toks.n_cut:
            st.warning(f"The {name} was cut to {len(toks)} tokens for this demonstration.")
    st.markdown(STEPS)
    _charts(dec, head)
    _numbers(dec, head, e)
    with engineers():
        st.markdown(
            f"`attention_core.run_decoder(model, source, target, {layer})`: "
            f"`multi_head_attention(weights, target, causal=True)`, then "
            "`multi_head_attention(weights, mid, memory)` with `memory` the source's "
            f"`hidden_ltd[-1]` and `weights = model.params.layer({layer})`: the encoder's own "
            "attention function, one layer's weights and LayerNorm for both."
        )


def _charts(dec: DecoderTrace, head: int) -> None:
    """The masked self-attention and the cross-attention of one head, both tagged."""
    tgt, src, layer = dec.target.tokens, dec.source.tokens, dec.layer
    self_p, cross_p = dec.self_attn.pattern_hqk[head], dec.cross.pattern_hqk[head]
    where = f"layer {layer}'s weights, head {head} ({TAG})"
    c1, c2 = st.columns(2)
    chart(
        make_pattern_heatmap(self_p, tgt, title=f"masked self-attention, {where}"),
        "learn_dec_self",
        f"How to read this ({TAG}): the target sentence attending to itself under the causal "
        "mask: the upper triangle is 0.",
        c1,
    )
    chart(
        make_cross_pattern(cross_p, tgt, src, title=f"cross-attention, {where}"),
        "learn_dec_cross",
        f"How to read this ({TAG}): each row is a target token; its weights over the source "
        "tokens sum to 1. The rows and columns are different sentences, so the matrix need not "
        "be square.",
        c2,
    )


def _numbers(dec: DecoderTrace, head: int, e: int) -> None:
    """Shapes, the causal mask's zeros, row sums and what each target token looks at most."""
    tgt, src, layer = dec.target.tokens, dec.source.tokens, dec.layer
    self_p, cross_p = dec.self_attn.pattern_hqk[head], dec.cross.pattern_hqk[head]
    m, n = len(tgt), len(src)
    st.latex(
        rf"\mathrm{{softmax}}\!\left(\frac{{Q_{{\text{{tgt}}}} K_{{\text{{src}}}}^{{\top}}}}"
        rf"{{\sqrt{{{e}}}}}\right) V_{{\text{{src}}}}:\quad [{m} \times {e}] \cdot [{e} \times "
        rf"{n}] \to [{m} \times {n}] \to [{m} \times {n}] \cdot [{n} \times {e}] = [{m} \times {e}]"
    )
    c = st.columns(3)
    c[0].metric(
        "largest self-attention weight above the diagonal",
        f"{self_p[np.triu_indices(m, 1)].max(initial=0.0):.4f}",
    )
    sums = cross_p.sum(axis=1, dtype=np.float64)
    c[1].metric("cross-attention row sums, smallest", f"{sums.min():.6f}")
    c[2].metric("cross-attention row sums, largest", f"{sums.max():.6f}")
    best = cross_p.argmax(axis=1)
    st.dataframe(
        {
            "target token": [f"{q}: {t}" for q, t in enumerate(tgt)],
            f"looks most at (source, {TAG})": [f"{k}: {src[k]}" for k in best],
            "weight": cross_p[np.arange(m), best],
        },
        key="learn_cross_table",
        hide_index=True,
        column_config={"weight": NUM},
    )
    st.caption(
        f"Illustrative: borrowed weights, not a trained decoder's. Layer {layer}'s W_Q, W_K, "
        "W_V and W_O serve both kinds of attention."
    )
