"""Value updates ΔE (pages/values.py): the token followed, and each step of its update, from one
head's weights to the vector the next layer reads, as charts, tables and files."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attention_core import default_token, largest_terms, output_bias, update_steps
from attention_core.core.family import Trace
from attention_core.methods.values import ValueUpdate, value_update
from ui import downloads, glossary, router, safe, show
from ui.cache import get_model
from ui.state.text import Values
from ui.widgets import token_picker
from viz.norm_bars import make_norm_bars
from viz.value_update import make_value_update

SHOWN = 8  # dimensions of a vector shown in the tables
SUB = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
NUM = st.column_config.NumberColumn(format="%.3f")  # three decimals for learners
LEAD = (
    "Attention does not only decide who looks at whom: it moves information. Each token's vector "
    "E gets an update ΔE, built from weighted sums of the tokens' value vectors V, one per head, "
    "each with its head's attention weights. Follow one token's update, from one head's weights "
    "to E + ΔE and on to the vector the next layer reads."
)


@dataclass(frozen=True)
class Followed:
    """The token whose update the page follows, and its update on the sidebar's head."""

    token: int
    up: ValueUpdate
    keep: NDArray[np.int64]  # the positions shown
    layer: int
    head: int

    @property
    def at(self) -> int:
        """The token's place among the positions shown."""
        return int(np.searchsorted(self.keep, self.token))


def follow(shared: router.Shared, trace: Trace) -> Followed:
    """The token menu (the last real word at first), and the token's update."""
    tokens, keep = trace.tokens.tokens, shared.visible(trace)
    first = default_token(tokens, trace.tokens.special_t)
    token = token_picker(
        "Token whose update to follow", Values.token.key, shared.text, keep, tokens, lambda: first
    )
    bias = output_bias(get_model(shared.model), shared.layer)
    up = value_update(trace, bias, shared.layer, shared.head, token)
    return Followed(token, up, keep, shared.layer, shared.head)


def who(trace: Trace, f: Followed) -> str:
    return safe.token(trace.tokens.tokens[f.token])


def weights(trace: Trace, f: Followed) -> None:
    """Section 1: the token's row of the pattern, with each value vector's size."""
    up, keep, tokens = f.up, f.keep, trace.tokens.tokens
    fig = make_value_update(up.weights_k[keep], up.v_norms_k[keep], [tokens[i] for i in keep], f.at)
    show.plot(fig, "v_weights")
    glossary.note(
        f"How to read this: each bar is the weight a_j that {who(trace, f)} gives a token in this "
        f"head, its row of the attention pattern (all weights sum to 1); the orange bar is "
        f"{who(trace, f)} itself. Hover a bar for the size of that token's value vector V_j."
        + (
            f" The hidden [CLS]/[SEP] carry {1 - up.weights_k[keep].sum():.3f}."
            if keep.size < trace.n_tokens
            else ""
        )
    )


def _sum(trace: Trace, up: ValueUpdate, token: int) -> str:
    """z = Σ a_j V_j with its largest terms written out."""
    tokens, n = trace.tokens.tokens, trace.n_tokens
    big = largest_terms(up.weights_k)
    terms = " + ".join(
        f"{up.weights_k[j]:.3f}·V{str(j).translate(SUB)} ({safe.token(tokens[j])})" for j in big
    )
    rest = np.setdiff1d(np.arange(n), big)
    return f"z{str(token).translate(SUB)} = Σ a_j V_j = {terms}" + (
        f" + … ({rest.size} more key{'s' if rest.size > 1 else ''}, weight "
        f"{up.weights_k[rest].sum():.3f})"
        if rest.size
        else ""
    )


def weighted_sum(trace: Trace, f: Followed) -> None:
    """Section 2: the weighted sum of value vectors, as a formula, a table and a file."""
    up, tokens, n = f.up, trace.tokens.tokens, trace.n_tokens
    glossary.say(_sum(trace, up, f.token))
    glossary.note(
        "The notes write this sum as the update itself, e.g. ΔE₂ = 0.55·V₀ + 0.4·V₁ + "
        "0.05·V₂ for “Dirty Quantum Plumbing”. In the real model z has fewer numbers than the "
        "token's vector (one head's d_k, not the model's width), and it still passes through "
        "the output matrix W_O to become this head's update of the whole vector (step 3)."
    )
    dims = [f"V[{e}]" for e in range(SHOWN)]
    table = {
        "key j": np.arange(n),
        "token": list(tokens),
        "weight a_j": up.weights_k,
        "‖V_j‖": up.v_norms_k,
    } | dict(zip(dims, up.v_ke[:, :SHOWN].T, strict=True))
    table["…"] = ["…"] * n
    st.dataframe(
        table,
        key="v_table",
        hide_index=True,
        column_config={c: NUM for c in ["weight a_j", "‖V_j‖", *dims]},
    )
    glossary.note(
        f"How to read this: one row per key j — its weight, the size of its value vector and its "
        f"first {SHOWN} numbers. Multiply each row by its weight and add the rows up: "
        "that is z, the first line of the next table."
        + (" [CLS]/[SEP] stay in this table: the sum needs every key." if f.keep.size < n else "")
    )
    _worked_csv(trace, f)


def _worked_csv(trace: Trace, f: Followed) -> None:
    up = f.up
    names = [f"{j}:{t}" for j, t in enumerate(trace.tokens.tokens)] + ["z = Σ a_j V_j"]
    worked = np.column_stack(
        [
            np.append(up.weights_k, up.weights_k.sum()),
            np.append(up.v_norms_k, np.linalg.norm(up.z_e)),
            np.vstack([up.v_ke, up.z_e]),
        ]
    )
    downloads.csv_button(
        "Worked table (.csv)",
        worked,
        names,
        ["weight", "norm", *(f"v{e}" for e in range(up.z_e.size))],
        f"L{f.layer}H{f.head}_token{f.token}_values.csv",
        key="v_csv",
    )


def new_vector(trace: Trace, f: Followed) -> None:
    """Section 3: from z to the vector the next layer reads."""
    steps = update_steps(f.up, last_layer=f.layer == trace.config.n_layers - 1)
    st.dataframe(
        {
            "vector": list(steps),
            "size ‖·‖": [float(np.linalg.norm(v)) for v in steps.values()],
        }
        | {f"[{e}]": [float(v[e]) for v in steps.values()] for e in range(SHOWN)}
        | {"…": ["…"] * len(steps)},
        key="v_steps",
        hide_index=True,
        column_config={c: NUM for c in ["size ‖·‖", *(f"[{e}]" for e in range(SHOWN))]},
    )
    glossary.note(
        "How to read this: z goes through this head's slice of the output matrix W_O and becomes "
        "this head's proposal ΔE_h, as long as the token's vector. The "
        f"{trace.config.n_heads} heads' proposals "
        + (
            "plus a bias b_O make the layer's ΔE, which is added to E. That sum is not yet the "
            "token's new vector: a LayerNorm re-centres and rescales it (to mean 0 and spread 1, "
            "then a learned gain and bias per number), the block's feed-forward network adds its "
            "own update, and a second LayerNorm gives the vector the next layer reads (last row)."
            if f.up.normed_d is not None
            else "make the layer's ΔE (this model has no bias b_O), which is added to E. The "
            "block's feed-forward network then adds its own update, which it computes from a "
            "normalized copy of E + ΔE; the stream itself is never normalized between blocks "
            "(last row)."
        )
    )


def proposals(trace: Trace, f: Followed) -> None:
    """Section 4: every head's proposal for the token."""
    fig = make_norm_bars(
        f.up.head_norms_h,
        [f"H{h}" for h in range(f.up.head_norms_h.size)],
        highlight=f.head,
        x_title="heads of layer " + str(f.layer),
        y_title="‖ΔE_h‖",
    )
    show.plot(fig, "v_heads")
    glossary.note(
        f"How to read this: the size of each head's proposed change to {who(trace, f)}; the "
        "orange bar is the head followed above. A tall bar is a head that wants to move this "
        "token a lot."
    )


def every_token(trace: Trace, f: Followed) -> None:
    """Section 5: how much the layer changes every token."""
    fig = make_norm_bars(
        f.up.delta_norms_t[f.keep],
        [trace.tokens.tokens[i] for i in f.keep],
        token_axis=True,
        highlight=f.at,
        y_title="‖ΔE‖",
    )
    show.plot(fig, "v_tokens")
    glossary.note(
        "How to read this: the size of the whole layer's update ΔE for each token (all heads"
        + (" plus the bias b_O" if f.up.normed_d is not None else ": this model has no bias b_O")
        + "); the orange bar is the chosen token. Tokens with tall bars are rewritten the most."
    )


def engineers(f: Followed) -> None:
    up, layer, head, token = f.up, f.layer, f.head, f.token
    with st.expander("For engineers"):
        st.markdown(
            f"- Widths: z is `z_lhqe[{layer}, {head}, {token}]`, {up.z_e.size} numbers (d_head); "
            f"ΔE_h, ΔE and the stream have {up.delta_d.size} (d_model); `v_lhke` holds V.\n"
            f"- Check: Σ_h ΔE_h + b_O − ΔE has largest difference {up.sum_error:.2e} over the "
            f"{up.delta_d.size} dimensions (float32 rounding); "
            f"‖b_O‖ = {np.linalg.norm(up.bias_d):.3f}.\n"
            "- Numbers: `attention_core.methods.values.value_update` and `update_steps`; the "
            "downloaded "
            "table keeps full precision."
        )
