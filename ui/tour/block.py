"""Step: the encoder block (ΔE → LayerNorm → feed-forward → LayerNorm), and why blocks stack."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core import ModelConfig, cosine
from attention_core.core.family import Trace
from attention_core.lessons.demos import drift, weight_counts
from attention_core.lessons.tour_numbers import BlockChain, block_chain
from ui import glossary
from ui.cache import as_encoder_trace, get_model, get_trace
from ui.router import Shared
from ui.tour.common import BANK_A, BANK_B, THREE, chart, engineers, say, token
from viz.embedding_shift import layer_name
from viz.learn_strip import make_embedding_strip
from viz.norm_bars import make_norm_bars

TITLE = "The encoder block, and why blocks stack"
PAGE = "embedding_shift"  # the page that explores this step further (ui.registry)


def text(cfg: ModelConfig, counts: tuple[int, int]) -> str:
    attention, dense = counts
    return (
        "Attention is one of the two parts of an encoder block; the other, the feed-forward "
        f"network, holds more of the learned numbers: {dense:,} against attention's "
        f"{attention:,} ({dense / attention:.3f} times as many) in every layer of this model. "
        "In order: each head proposes a change; the "
        "proposals are summed and the bias b_O added, giving ΔE; ΔE is added to the input "
        "(E + ΔE, the residual connection); a LayerNorm shifts and rescales that sum to mean 0 "
        "and spread 1, then multiplies each of its numbers by a learned gain and adds a learned "
        "bias, so its result is not exactly mean 0 and spread 1 any more; a feed-forward network "
        f"then processes each token on its own — {cfg.d_model} numbers to {cfg.d_ff:,}, GELU, "
        f"back to {cfg.d_model} — and its output is added and normalized the same way. Only "
        "that is the block's output, the next block's input: E + ΔE on its own is not. Blocks "
        f"(layers) count from 0 to {cfg.n_layers - 1}, like the sidebar; hidden state 0 is the "
        "embedding and hidden state l comes out of layer l − 1."
    )


def norm_text(chain: BlockChain, i: int, d: int) -> str:
    """What the first LayerNorm did to token ``i``, read off the numbers."""
    a, out = chain.attn_out_d, chain.out_d
    return (
        f"For token {i}: E + ΔE has mean **{chain.mid_mean:.3f}** and spread "
        f"**{chain.mid_std:.3f}**. The LayerNorm first makes that mean 0 and spread 1, which "
        f"for {d} numbers is always a size of √{d} ≈ **{np.sqrt(d):.3f}**, whatever the input; "
        f"after its gain and bias, a has mean **{a.mean():.3f}**, spread **{a.std():.3f}** and "
        f"size **{np.linalg.norm(a):.3f}**. The block's output (after the second LayerNorm) has "
        f"size **{np.linalg.norm(out):.3f}**."
    )


STACK = (
    "Why stack blocks? One block lets each word gather from the others once. Stacked, a word "
    "can use what its neighbours gathered in the block before — in “The river bank was "
    "muddy”, “bank” can read “river” after “river” has already read its own neighbours — so "
    "meaning builds up a little per block. Each block turns the vector only part of the way, "
    "as the cosines below show."
)


def render(shared: Shared, trace: Trace) -> None:
    cfg = trace.config
    glossary.say(text(cfg, weight_counts(get_model(shared.model).params.layer(shared.layer))))
    i = token(shared, trace)
    _chain(trace, shared.layer, i)
    glossary.say(STACK)
    _bank_drift(shared, cfg.n_layers)
    _stack(trace, i)
    with engineers():
        st.markdown(
            f"Rows: `trace.hidden_ltd[:, {i}]` (state s = `layer_name(s)`); the sub-steps are "
            f"`trace.delta_ltd`, `trace.attn_out_ltd`, `trace.ffn_out_ltd` at layer "
            f"{shared.layer}; cosines: `attention_core.lessons.demos.drift(trace, token)`."
        )


def _chain(trace: Trace, layer: int, i: int) -> None:
    """Token ``i`` through layer ``layer``, each sub-step labelled, with its LayerNorm and FFN."""
    chain = block_chain(as_encoder_trace(trace), layer, i)
    labels = [
        "E (in)",
        "ΔE = Σ_h ΔE_h + b_O",
        "E + ΔE",
        "a = LayerNorm(E + ΔE)",
        "feed-forward FFN(a)",
        "a + FFN(a)",
        f"LayerNorm(a + FFN(a)) = {layer_name(layer + 1)}",
    ]
    vectors = np.stack(chain.vectors())
    fig = make_norm_bars(
        np.linalg.norm(vectors, axis=-1),
        labels,
        y_title="‖vector‖",
        title=f"token {i} through layer {layer}",
    )
    chart(
        fig,
        "learn_block_norms",
        "How to read this: the size of the chosen token's vector at each sub-step of this "
        "layer, in order. Each LayerNorm sets the size anew, whatever it was before: its "
        "learned gain and bias decide it, so the two LayerNorms need not give the same size.",
    )
    chart(
        make_embedding_strip(vectors, labels, token_axis=False),
        "learn_block_strips",
        f"How to read this: the same vectors, dimension by dimension (the {chain.d_ff:,}-wide "
        "GELU layer is left out).",
    )
    st.latex(
        rf"\mathrm{{LN}}(x) = \gamma \odot \frac{{x - \mu}}{{\sigma}} + \beta:\quad "
        rf"\mu = {chain.mid_mean:.3f},\ \sigma = {chain.mid_std:.3f}"
        rf"\ \text{{for }} E_{{{i}}} + \Delta E_{{{i}}}"
    )
    d, f = trace.config.d_model, chain.d_ff
    st.latex(
        rf"\mathrm{{FFN}}(a) = W_2\,\mathrm{{GELU}}(W_1 a + b_1) + b_2:\quad {d} \to {f} \to {d},"
        rf"\quad {chain.n_active} \text{{ of }} {f} \text{{ GELU outputs}} > 0"
    )
    glossary.say(norm_text(chain, i, d))


def _stack(trace: Trace, i: int) -> None:
    """The chosen token's hidden states: size, turn per layer, distance from its static vector."""
    glossary.say(
        f"Following {say(i, trace)} of your sentence through all {trace.config.n_layers} blocks:"
    )
    h, dr = trace.hidden_ltd[:, i], drift(trace, i)
    st.dataframe(
        {
            "hidden state": [layer_name(s) for s in range(len(h))],
            "‖h‖": np.linalg.norm(h, axis=-1),
            "cos with the state before": [1.0, *dr.step_cos_l],
            "cos with the static vector": dr.static_cos_s,
        },
        key="learn_stack",
        hide_index=True,
        column_config={
            c: THREE for c in ("‖h‖", "cos with the state before", "cos with the static vector")
        },
    )
    glossary.note(
        "How to read this: the chosen token through the stack. Cosine with the state before "
        "shows how much that layer turned the vector; cosine with the static vector (its row "
        "of the lookup table) how far it has come from it."
    )


def _bank_drift(shared: Shared, n_layers: int) -> None:
    """“bank” by the river and at the deposit, block by block."""
    a, b = get_trace(shared.model, BANK_A), get_trace(shared.model, BANK_B)
    ia, ib = a.tokens.tokens.index("bank"), b.tokens.tokens.index("bank")
    da, db = drift(a, ia), drift(b, ib)
    apart = [float(cosine(a.hidden_ltd[s, ia], b.hidden_ltd[s, ib])) for s in range(n_layers + 1)]
    st.dataframe(
        {
            "layer": list(range(n_layers)),
            "A: cos(in, out)": da.step_cos_l,
            "B: cos(in, out)": db.step_cos_l,
            "A: cos with static": da.static_cos_s[1:],
            "A vs B after the layer": apart[1:],
        },
        key="learn_bank_drift",
        hide_index=True,
        column_config={
            c: THREE
            for c in (
                "A: cos(in, out)",
                "B: cos(in, out)",
                "A: cos with static",
                "A vs B after the layer",
            )
        },
    )
    glossary.say(
        f"Measured: each layer turns “bank” in A by a cosine between **{da.step_cos_l.min():.3f}**"
        f" and **{da.step_cos_l.max():.3f}** (1 = not at all); its cosine with its static vector "
        f"falls from **{da.static_cos_s[0]:.3f}** (embedding) to **{da.static_cos_s[-1]:.3f}** "
        f"({layer_name(n_layers)}), and the two “bank”s end at **{apart[-1]:.3f}**."
    )
    glossary.note(
        f"“bank” in A = “{BANK_A}” and B = “{BANK_B}”. cos(in, out): how little each layer "
        "turns the vector (1 = not at all); A vs B: how far the two “bank”s have parted after "
        f"each layer (they start at {apart[0]:.3f} in the embedding, where only the position "
        "differs)."
    )
