"""Step: masking: the causal mask of a decoder (on SmolLM2, trained with it; on MiniLM as a
what-if), and the padding mask of a batch."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core import attention_steps
from attention_core.core.family import Trace
from attention_core.lessons.one_pass import OnePass
from attention_core.methods.roles import LABELS
from ui import explore, glossary, show
from ui.cache import get_trace, model_error
from ui.router import Shared
from ui.text.decoder import MODEL as DECODER
from ui.tour import cache
from ui.tour.common import LAYER_HEAD, engineers, say, token
from ui.tour.decoder import PREVIOUS, previous_head
from viz.pattern_heatmap import make_pattern_heatmap

TITLE = "Masking"
PAGE = "pattern"  # the page that explores this step further (ui.registry)

TEXT = (
    "A mask decides which keys a query may see. A decoder, which writes text one token at a "
    "time, must not peek at later tokens, so every score above the diagonal is set to −∞ before "
    "softmax; e^−∞ = 0, so those weights vanish and the rest of the row shares the whole weight "
    "of 1."
)
WHATIF = (
    "**What-if: the same mask on MiniLM.** MiniLM is an encoder: it was trained to look both "
    "ways and never with this mask. Below it is switched on anyway, on MiniLM's own scores: the "
    "weights on later tokens become 0 and the earlier ones share the row's whole 1. A model "
    "trained with the mask would have learned other scores, so this shows the arithmetic of "
    "masking, not what a decoder computes."
)
PADDING = (
    "The second kind of mask handles batches, and MiniLM does use this one. Sentences of "
    "different lengths are padded with [PAD] tokens to a common length, and a padding mask "
    "hides those keys from every query, so the real tokens' weights come out as if the padding "
    "were not there."
)


def render(shared: Shared, trace: Trace) -> None:
    glossary.say(TEXT)
    real(shared.text)
    one_pass = whole_text(shared.text)
    _whatif(shared, trace)
    _padding(shared, trace, one_pass)


def _whatif(shared: Shared, trace: Trace) -> None:
    """MiniLM's own scores with the causal mask switched on."""
    glossary.say(WHATIF)
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
    glossary.note(
        "How to read this (what-if, MiniLM): left, the scaled scores with the hidden cells "
        "blanked out (−∞); right, the pattern that results — the upper triangle is exactly 0."
    )
    before = float(trace.pattern_lhqk[layer, head, i, i + 1 :].sum())
    after = float(causal.pattern[i, i + 1 :].sum())
    top = float(causal.pattern[np.triu_indices(n, 1)].max(initial=0.0))
    st.latex(
        rf"x_{{{i},j}} = -\infty \ (j > {i}) \;\Rightarrow\; e^{{-\infty}} = 0:\quad "
        rf"\sum_{{j > {i}}} a_{{{i},j}} = {before:.3f} \to {after:.3f},\quad "
        rf"\sum_{{j \le {i}}} a_{{{i},j}} = {causal.pattern[i, : i + 1].sum():.3f}"
    )
    glossary.say(
        f"What-if, for {say(i, trace)}: as MiniLM runs, it gives **{before:.3f}** of its "
        f"attention to later tokens; with the mask switched on, **{after:.3f}**. Largest "
        f"weight above the diagonal: **{top:.3f}**." + little_to_hide(trace, layer, head, before)
    )


LITTLE = 0.005  # below this weight on later tokens, the mask has nothing to show on a token


def little_to_hide(trace: Trace, layer: int, head: int, before: float) -> str:
    """When the followed token gives almost nothing to later tokens: which word gives most."""
    if before >= LITTLE:
        return ""
    later_q = np.triu(trace.pattern_lhqk[layer, head], 1).sum(-1)
    later_q[trace.tokens.special_t] = 0.0  # a word, not [CLS] or [SEP]
    best = int(np.argmax(later_q))
    return (
        f" This token has almost nothing after it to hide; {say(best, trace)} gives the most "
        f"to later tokens, **{later_q[best]:.3f}**: pick it in “Token to follow” to see the "
        "mask move weight."
    )


def real(text: str) -> None:
    """The mask as a decoder trained with it uses it: one SmolLM2 head on the sentence."""
    glossary.say("**The real thing: SmolLM2**, a decoder trained with this mask, on your sentence.")
    if error := model_error(DECODER):
        glossary.box(
            f"SmolLM2 could not be loaded, so this part is not shown. {error}", kind="warning"
        )
        return
    dec = get_trace(DECODER, text)
    best = previous_head(text)
    layer, head = best.layer, best.head
    pattern = np.asarray(dec.pattern_lhqk[layer, head])
    tokens, n = list(dec.tokens.tokens), dec.n_tokens
    show.plot(
        make_pattern_heatmap(pattern, tokens, title=f"SmolLM2, layer {layer}, head {head}"),
        "learn_mask_real",
        st,
        "How to read this: row i is where token i looks; the cells right of the diagonal are "
        "later tokens, hidden by the mask.",
    )
    above = pattern[np.triu_indices(n, 1)]
    exact = "exactly 0" if not above.any() else f"at most {above.max():.3f}"
    job = (
        f"a {LABELS[PREVIOUS]} head by the rule"
        if best.named
        else f"too little for the rule to call it a {LABELS[PREVIOUS]} head"
    )
    glossary.say(
        f"In this head of SmolLM2 (its layer {layer}, head {head}: the one that looks most at "
        f"the token just before, {best.share:.0%} of its weight; {job}; the sidebar's layer and "
        "head are MiniLM's) every weight above "
        f"the diagonal is **{exact}**. The first token can see only "
        f"itself, so its whole weight, **{pattern[0, 0]:.3f}**, is on itself; the last can "
        f"see all {n} tokens."
    )


def whole_text_words(p: OnePass) -> str:
    """Why the mask lets a decoder learn from every position at once, on SmolLM2's numbers."""
    n = len(p.tokens)
    return (
        "**Why the mask lets a decoder learn from a whole text at once.** Row i sees only tokens "
        "0 to i, so the guess the pass makes after token i is the guess a pass on those tokens "
        f"alone would make. Measured: SmolLM2 run on your first {p.cut} "
        f"token{'s' if p.cut > 1 else ''} alone guesses what the whole pass guesses there: the "
        f"same probabilities, apart from rounding in the last digits. So one pass over your {n} "
        f"tokens holds {n - 1} fair exercises, “guess the next token from the ones before it”, "
        "and training scores them all together instead of running the model once per token. "
        "Without the mask, row i could see token i + 1: the answer it is asked for."
    )


def whole_text(text: str) -> str:
    """One SmolLM2 pass as training reads it: a guess after every token, each a fair one."""
    if model_error(DECODER):
        return ""  # real() has said why
    p = cache.decoder_one_pass(DECODER, text)
    glossary.say(whole_text_words(p))
    st.dataframe(
        {
            "after": list(p.tokens[:-1]),
            "the real next token": list(p.tokens[1:]),
            "SmolLM2's probability for it": p.next_prob_t,
        },
        key="learn_mask_one_pass",
        hide_index=True,
        column_config={
            "SmolLM2's probability for it": st.column_config.NumberColumn(format="%.3f")
        },
    )
    glossary.note(
        "How to read this: each row is one exercise from the same single pass; in training, the "
        "model's weights are nudged to raise every one of these probabilities at once."
    )
    return (
        f"`attention_core.lessons.one_pass.one_pass`: `next_probs_tv` of the whole pass "
        f"against a pass on `prefix(tokens, {p.cut})`; largest difference **{p.gap:.1e}**. "
        "`tests/app/test_tour_masking.py` checks both against transformers' LlamaForCausalLM."
    )


def _padding(shared: Shared, trace: Trace, one_pass: str) -> None:
    """The sentence plus [PAD] tokens in layer 0, with and without the padding mask."""
    head, n = shared.head, trace.n_tokens
    glossary.say(PADDING)
    pad = cache.padding(shared.model, shared.text)
    tokens = pad.tokens
    if len(tokens) == n:
        glossary.box("Your text already fills every position: there is no room for padding.")
        if one_pass:
            with engineers():
                st.markdown(one_pass)
        return
    c1, c2 = st.columns(2)
    for col, key, pattern, title in (
        (c1, "learn_pad_free", pad.free_hqk[head], "no padding mask"),
        (c2, "learn_pad_masked", pad.masked_hqk[head], "with the padding mask"),
    ):
        show.plot(make_pattern_heatmap(pattern, tokens, title=title), key, col)
    glossary.note(
        f"How to read this: your sentence with {len(tokens) - n} [PAD] tokens appended, in "
        f"layer 0, head {head}. Left without the padding mask (real tokens leak weight onto "
        "[PAD]), right with it."
    )
    c = st.columns(2)
    glossary.metric(
        "weight on [PAD], no mask (mean per row)", f"{pad.leak_hq[head].mean():.3f}", where=c[0]
    )
    glossary.metric(
        "weight on [PAD], with the mask", f"{pad.masked_leak_hq[head].max():.3f}", where=c[1]
    )
    with engineers():
        st.metric("largest change vs. no padding at all", f"{pad.gap:.1e}")
        st.markdown(
            "`padded_input(model, tokens, n_pad)` gives the padded layer-0 input and "
            "`key_mask_k` (False on [PAD]); `multi_head_attention(..., key_mask_k=key_mask_k)` "
            "sets those keys to −∞. The change against the unpadded trace is float rounding; "
            "`tests/core/test_demos.py` checks both patterns against transformers' "
            "`attention_mask`. SmolLM2: `ui.cache.get_trace('smollm2', text).pattern_lhqk"
            "[layer, head]`, the head chosen as in the decoder step "
            "(`ui.tour.decoder.previous_head`)."
        )
        if one_pass:
            st.markdown(one_pass)
