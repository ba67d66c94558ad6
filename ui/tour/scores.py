"""Step: scores, the dot product of every query with every key."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core.core.family import Trace
from ui import explore, glossary
from ui.router import Shared
from ui.tour.common import LAYER_HEAD, engineers, say, token

TITLE = "Scores: query · key"
PAGE = "pattern"  # the page that explores this step further (ui.registry)

TEXT = (
    "How well key j answers query i is their dot product q_i·k_j: multiply the two vectors "
    "number by number and add up. It is large and positive when the two point the same way, "
    "near 0 when they are unrelated, negative when they point apart, and the longer the two "
    "vectors, the larger it is either way. All pairs at once give "
    "the score matrix Q·Kᵀ, one row per query. These raw scores are not weights yet: the next "
    "step turns each row into weights that add up to 1."
)


def render(shared: Shared, trace: Trace) -> None:
    glossary.say(TEXT)
    layer, head, e = shared.layer, shared.head, trace.config.d_head
    i = token(shared, trace)
    explore.shared_only(
        trace, shared.model, shared.text, "learn_scores", stages=("scores",), controls=LAYER_HEAD
    )
    glossary.note(
        "How to read this: rows are queries, columns keys; each cell is one dot product q·k "
        "of this layer and head, before anything else is done to it."
    )
    row = trace.scores_lhqk[layer, head, i]
    j, low = int(np.argmax(row)), int(np.argmin(row))
    q, k = trace.q_lhqe[layer, head, i], trace.k_lhke[layer, head, j]
    terms = " + ".join(f"({q[m]:.2f})({k[m]:.2f})" for m in range(2))
    st.latex(
        rf"s_{{{i},{j}}} = q_{{{i}}} \cdot k_{{{j}}} = \sum_{{m=0}}^{{{e - 1}}} q_{{{i},m}}"
        rf"\,k_{{{j},m}} = {terms} + \dots = {row[j]:.3f}"
    )
    glossary.say(
        f"Query: {say(i, trace)}. Its highest score is with {say(j, trace)} "
        f"(**{row[j]:.2f}**), its lowest with {say(low, trace)} (**{row[low]:.2f}**)."
    )
    with engineers():
        st.markdown(
            f"The matrix is `trace.scores_lhqk[{layer}, {head}]`, computed as "
            f"`q_hqe @ k_hke.transpose(0, 2, 1)`; the key bias b_K is inside k."
        )
