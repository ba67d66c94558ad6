"""Step: positional information, learned (MiniLM) next to the original sine waves."""

from __future__ import annotations

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attention_core import ModelConfig, cosine, default_token, sinusoidal_positions
from attention_core.core.family import Trace
from attention_core.models.bert.forward import Trace as BertTrace
from ui import glossary
from ui.cache import as_encoder_trace, get_trace
from ui.router import Shared
from ui.tour.common import BANK_A, BANK_B, chart, engineers
from viz.learn_positions import make_positions

TITLE = "Positional information"
PAGE = "build_head"  # the page that explores this step further (ui.registry)


def text(cfg: ModelConfig) -> str:
    return (
        "Attention itself treats its input as a set: shuffle the words and each would get the "
        "same update. To make order visible, a vector that depends only on the position is "
        f"added to every token's embedding. MiniLM learned its {cfg.n_positions} position "
        "vectors during training; the original transformer used fixed sine and cosine waves of "
        "different wavelengths instead (the ones the build-your-own-head page adds). The sum, "
        "normalized by a LayerNorm, is hidden state 0 (“embedding”): the input of layer 0."
    )


def _charts(trace: BertTrace, sinus_td: NDArray[np.float32]) -> None:
    c1, c2 = st.columns(2)
    chart(
        make_positions(trace.position_td, title=f"{trace.config.name}: learned position vectors"),
        "learn_pos_learned",
        "How to read this: row p is the vector added at position p (0 is [CLS]); columns are "
        "dimensions. Neighbouring rows look alike, far-apart rows less so.",
        c1,
    )
    chart(
        make_positions(sinus_td, title="sinusoidal encoding"),
        "learn_pos_sin",
        "How to read this: the fixed encoding. Early dimensions oscillate fast (they tell close "
        "positions apart), later ones slowly (they tell far-apart positions apart).",
        c2,
    )


def render(shared: Shared, trace: Trace) -> None:
    glossary.say(text(trace.config))
    n, d = trace.n_tokens, trace.config.d_model
    sinus = sinusoidal_positions(n, d)
    enc = as_encoder_trace(trace)  # the tour's MiniLM: its learned positions
    _charts(enc, sinus)
    st.latex(
        rf"PE_{{(p,\,2i)}} = \sin\!\left(\frac{{p}}{{10000^{{2i/{d}}}}}\right),\quad "
        rf"PE_{{(p,\,2i+1)}} = \cos\!\left(\frac{{p}}{{10000^{{2i/{d}}}}}\right),\quad "
        rf"PE_{{(1,\,0)}} = \sin(1) = {sinus[1, 0]:.3f}"
    )
    far = n - 1
    near_l, far_l = (float(cosine(enc.position_td[1], enc.position_td[j])) for j in (2, far))
    near_s, far_s = (float(cosine(sinus[1], sinus[j])) for j in (2, far))
    glossary.say(
        f"Neighbours look alike, distant positions less: cosine of positions 1 and 2 is "
        f"**{near_l:.3f}** (learned) / **{near_s:.3f}** (sinusoidal); of positions 1 and {far}, "
        f"**{far_l:.3f}** / **{far_s:.3f}**."
    )
    i = default_token(trace.tokens.tokens, trace.tokens.special_t)
    w, p, t = enc.word_td[i], enc.position_td[i], enc.token_type_td[i]
    st.latex(
        rf"x_{{{i}}} = \mathrm{{LayerNorm}}(w_{{{i}}} + p_{{{i}}} + t):\quad "
        rf"\|w_{{{i}}}\| = {np.linalg.norm(w):.3f},\ \|p_{{{i}}}\| = {np.linalg.norm(p):.3f},\ "
        rf"\|t\| = {np.linalg.norm(t):.3f}"
    )
    glossary.note(
        f"Here w is token {i}'s own vector from the vocabulary's table, p its position vector and "
        "t the segment vector, the same for every token of a single sentence."
    )
    a, b = (as_encoder_trace(get_trace(shared.model, s)) for s in (BANK_A, BANK_B))
    ia, ib = a.tokens.tokens.index("bank"), b.tokens.tokens.index("bank")
    moved = float(cosine(a.embed_sum_td[ia], b.embed_sum_td[ib]))
    entering = float(cosine(a.hidden_ltd[0, ia], b.hidden_ltd[0, ib]))
    glossary.say(
        f"With positions added, “bank” at position {ia} of “{BANK_A}” and at position {ib} of "
        f"“{BANK_B}” no longer share a vector (the static vectors' cosine was 1 in step 1): the "
        f"two sums have cosine **{moved:.3f}**, and after the LayerNorm, as they enter layer 0, "
        f"**{entering:.3f}**."
    )
    with engineers():
        st.markdown(
            "`trace.position_td` holds the learned rows (`embeddings.position_embeddings`), "
            "`trace.token_type_td` the segment vector t, `trace.embed_sum_td` the sum before "
            "LayerNorm and `trace.hidden_ltd[0]` after it; the sine waves are "
            "`attention_core.sinusoidal_positions(n, d)`."
        )
