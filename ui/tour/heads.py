"""Step: many heads at once: their proposals add up to ΔE, and where idle heads park weight."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core import ModelConfig, output_bias
from attention_core.core.family import Trace
from attention_core.lessons.demos import special_share
from attention_core.lessons.head_words import count_sentence, rule_sentence
from attention_core.lessons.tour_numbers import HeadSum, head_sum
from attention_core.methods.roles import RoleScores
from ui import explore, glossary
from ui.cache import as_encoder_trace, get_model
from ui.router import Shared
from ui.text.cache import head_roles
from ui.tour.common import chart, engineers, token
from viz.norm_bars import make_norm_bars

TITLE = "Many heads at once"
PAGE = "all_heads"  # the page that explores this step further (ui.registry)
N_SIDE_BY_SIDE = 4  # heads drawn next to each other


def text(cfg: ModelConfig, scores: RoleScores, layer: int) -> str:
    """The step's opening: many heads, each with its own weights, and what they are by the rule
    on the visitor's sentence (``head_words.count_sentence``)."""
    return (
        f"A layer runs {cfg.n_heads} heads side by side, each with its own W_Q, W_K and W_V, so "
        "each can spread its weight over the tokens its own way. "
        f"{count_sentence(scores, layer)} {rule_sentence()} Each head proposes its own update "
        f"ΔE_h for every token; the layer adds the {cfg.n_heads} proposals and one bias b_O to "
        "get ΔE."
    )


PARKING = (
    "Why would a head put weight on [CLS] and [SEP]? Softmax must hand out a total of 1 in "
    "every row, even when nothing in the sentence is what the head looks for. The markers are "
    "in every sentence, so a head can learn to park that weight there, as a “no-op”, when its "
    "pattern is absent (Clark et al., 2019, found that in BERT attending to [SEP] changes the "
    "output least exactly where a head's share on it is high)."
)


def render(shared: Shared, trace: Trace) -> None:
    cfg = trace.config
    layer, head, n_heads = shared.layer, shared.head, cfg.n_heads
    glossary.say(text(cfg, head_roles(shared.model, shared.text), layer))
    i = token(shared, trace)
    cells = [col for _ in range(N_SIDE_BY_SIDE // 2) for col in st.columns(2)]
    for slot, col in enumerate(cells):
        with col:  # each its own head, fixed: no control or key changes it
            explore.shared_only(
                trace,
                shared.model,
                shared.text,
                f"learn_heads_{slot}",
                stages=("pattern",),
                switches={"head": (head + slot) % n_heads},
                controls=(),
            )
    glossary.note(
        f"How to read this: {N_SIDE_BY_SIDE} heads of the same layer on the same sentence, "
        "starting at the sidebar's head; same colour scale, different habits."
    )
    bias_d = output_bias(get_model(shared.model), layer)
    _sum(head_sum(as_encoder_trace(trace), bias_d, layer, i), layer, head, i)
    _parking(trace, layer, head)


def _sum(heads: HeadSum, layer: int, head: int, i: int) -> None:
    """The heads' proposals for token ``i`` and their sum beside the layer's ΔE."""
    n_heads = len(heads.norms_h)
    chart(
        make_norm_bars(
            heads.norms_h,
            [f"head {h}" for h in range(n_heads)],
            highlight=head,
            y_title="‖ΔE_h‖",
            title=f"proposals for token {i}",
        ),
        "learn_head_norms",
        "How to read this: the size of each head's proposed update for the chosen token (the "
        "sidebar's head in orange). The layer's ΔE is their sum plus b_O.",
    )
    st.latex(
        rf"\Delta E_{{{i}}} = \sum_{{h=0}}^{{{n_heads - 1}}} \Delta E^{{(h)}}_{{{i}}} + b_O:"
        rf"\quad \Big\|\sum_h \Delta E^{{(h)}}_{{{i}}} + b_O\Big\| = "
        rf"{np.linalg.norm(heads.total_d):.3f},"
        rf"\quad \|\Delta E_{{{i}}}\| = {np.linalg.norm(heads.delta_d):.3f}"
    )
    with engineers():
        st.metric("largest difference, Σ_h ΔE_h + b_O vs. the layer's ΔE", f"{heads.gap:.1e}")
        st.markdown(
            f"`attention_core.lessons.tour_numbers.head_sum(trace, output_bias(model, {layer}), "
            f"{layer}, {i})`: proposals `trace.head_delta_hd({layer}, {i})` (z_h · W_O,h), ΔE "
            f"`trace.delta_ltd[{layer}, {i}]`; the share on the markers: "
            f"`attention_core.lessons.demos.special_share(trace, {layer})`."
        )


def _parking(trace: Trace, layer: int, head: int) -> None:
    glossary.say(PARKING)
    share = special_share(trace, layer)
    even = 2 / trace.n_tokens
    chart(
        make_norm_bars(
            share,
            [f"head {h}" for h in range(len(share))],
            highlight=head,
            y_title="weight on [CLS] + [SEP]",
            title=f"layer {layer}: weight on the markers",
        ),
        "learn_special",
        "How to read this: for each head of this layer, the weight a word of your sentence "
        "gives [CLS] and [SEP] together, averaged over the words (the sidebar's head in orange).",
    )
    glossary.say(
        f"Measured on your sentence: the heads of layer {layer} give the two markers "
        f"**{share.mean():.0%}** of a word's attention on average (head {head}: "
        f"**{share[head]:.0%}**; most: head {int(share.argmax())}, **{share.max():.0%}**). "
        f"An even spread over the {trace.n_tokens} tokens would give them **{even:.0%}**."
    )
