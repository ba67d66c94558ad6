"""Step: masking: the causal mask of a decoder, and the padding mask of a batch."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core import Trace, attention_steps
from ui import cache, explore, show
from ui.router import Shared
from ui.tour.common import LAYER_HEAD, engineers, say, token
from viz.pattern_heatmap import make_pattern_heatmap

TITLE = "Masking"
PAGE = "pattern"  # the page that explores this step further (ui.registry)

TEXT = (
    "A mask decides which keys a query may see. A decoder, which writes text one token at a "
    "time, must not peek at later tokens, so every score above the diagonal is set to −∞ before "
    "softmax; e^−∞ = 0, so those weights vanish and the rest of the row shares the whole weight "
    "of 1. MiniLM is an encoder and normally sees in both directions; here the mask is switched "
    "on to show the difference."
)
PADDING = (
    "The second kind of mask handles batches. Sentences of different lengths are padded with "
    "[PAD] tokens to a common length, and a padding mask hides those keys from every query, so "
    "the real tokens' weights come out as if the padding were not there."
)


def render(shared: Shared, trace: Trace) -> None:
    st.markdown(TEXT)
    layer, head, e, n = shared.layer, shared.head, trace.config.d_head, trace.n_tokens
    i = token(shared, trace)
    causal = attention_steps(trace.scores_lhqk[layer, head], e, causal=True)
    explore.shared_only(
        trace,
        shared.model,
        shared.text,
        "learn_masked",
        stages=("masked", "pattern"),
        switches={"causal": True},
        controls=LAYER_HEAD,
    )
    st.caption(
        "How to read this: left, the scaled scores with the hidden cells blanked out (−∞); "
        "right, the pattern that results — the upper triangle is exactly 0."
    )
    before = float(trace.pattern_lhqk[layer, head, i, i + 1 :].sum())
    after = float(causal.pattern[i, i + 1 :].sum())
    st.latex(
        rf"x_{{{i},j}} = -\infty \ (j > {i}) \;\Rightarrow\; e^{{-\infty}} = 0:\quad "
        rf"\sum_{{j > {i}}} a_{{{i},j}} = {before:.4f} \to {after:.4f},\quad "
        rf"\sum_{{j \le {i}}} a_{{{i},j}} = {causal.pattern[i, : i + 1].sum():.4f}"
    )
    st.markdown(
        f"For {say(i, trace)}: without the mask it gave **{before:.4f}** of its attention to "
        f"later tokens; with it, **{after:.4f}**. Largest weight above the diagonal: "
        f"**{causal.pattern[np.triu_indices(n, 1)].max(initial=0.0):.4f}**."
    )
    _padding(shared, trace)


def _padding(shared: Shared, trace: Trace) -> None:
    """The sentence plus [PAD] tokens in layer 0, with and without the padding mask."""
    head, n = shared.head, trace.n_tokens
    st.markdown(PADDING)
    pad = cache.padding(shared.model, shared.text)
    tokens = pad.tokens
    if len(tokens) == n:
        st.info("Your text already fills every position: there is no room for padding.")
        return
    c1, c2 = st.columns(2)
    for col, key, pattern, title in (
        (c1, "learn_pad_free", pad.free_hqk[head], "no padding mask"),
        (c2, "learn_pad_masked", pad.masked_hqk[head], "with the padding mask"),
    ):
        show.plot(make_pattern_heatmap(pattern, tokens, title=title), key, col)
    st.caption(
        f"How to read this: your sentence with {len(tokens) - n} [PAD] tokens appended, in "
        f"layer 0, head {head}. Left without the padding mask (real tokens leak weight onto "
        "[PAD]), right with it."
    )
    c = st.columns(2)
    c[0].metric("weight on [PAD], no mask (mean per row)", f"{pad.leak_hq[head].mean():.4f}")
    c[1].metric("weight on [PAD], with the mask", f"{pad.masked_leak_hq[head].max():.4f}")
    with engineers():
        st.metric("largest change vs. no padding at all", f"{pad.gap:.1e}")
        st.markdown(
            "`padded_input(model, tokens, n_pad)` gives the padded layer-0 input and "
            "`key_mask_k` (False on [PAD]); `multi_head_attention(..., key_mask_k=key_mask_k)` "
            "sets those keys to −∞. The change against the unpadded trace is float rounding; "
            "`tests/core/test_demos.py` checks both patterns against transformers' "
            "`attention_mask`."
        )
