"""The eleven steps of the guided tour, one small render function each, plus the navigation.

Every number shown comes from the shared trace or from attention_core on the same sentence.
LaTeX formulas carry numbers and indices only; user text goes through ui.safe in Markdown.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import streamlit as st

from attention_core import (
    Trace,
    attention_bytes,
    attention_steps,
    cell_arithmetic,
    cosine,
    default_token,
    largest_terms,
    output_bias,
    row_entropy_bits,
    sinusoidal_positions,
    value_update,
)
from ui import explore, learn_cache, safe
from ui import learn_text as text
from ui.cache import get_model, get_trace
from ui.sidebar import Shared
from viz.dk_saturation import make_dk_saturation
from viz.learn_cost import make_cost_curve
from viz.learn_cross import make_cross_pattern
from viz.learn_matrix import make_small_matrix
from viz.learn_positions import make_positions
from viz.learn_strip import make_embedding_strip
from viz.norm_bars import make_norm_bars
from viz.pattern_heatmap import make_pattern_heatmap
from viz.value_update import make_value_update

CHART = {"displaylogo": False}
BANK_A, BANK_B = "The river bank was muddy", "I made a deposit at the bank"
SHOWN_DIMS = 8  # query/key dimensions drawn in step 3
N_SIDE_BY_SIDE = 4  # heads drawn next to each other in step 8
NUM = st.column_config.NumberColumn(format="%.4f")
SUM = st.column_config.NumberColumn(format="%.6f")
PAGES = {
    "compare": "Compare sentences",
    "build_head": "Build your own head",
    "pattern": "Attention pattern",
    "values": "Value updates ΔE",
    "all_heads": "All heads",
    "embedding_shift": "Embedding shift",
}
LAYER_HEAD = ("layer", "head")  # the explorer's controls in the tour: the switches stay off
KEPT = ("learn_token", "learn_src", "learn_tgt")  # choices that survive steps without the widget

Render = Callable[[Shared, Trace], None]


def _view(shared: Shared, trace: Trace) -> tuple[np.ndarray, list[str]]:
    keep = shared.visible(trace)
    keep = keep if keep.size else np.arange(trace.n_tokens)
    return keep, [trace.tokens.tokens[i] for i in keep]


def _chart(fig, key: str, caption: str, where=st) -> None:
    where.plotly_chart(fig, key=key, config=CHART)
    where.caption(caption)


def _token(shared: Shared, trace: Trace) -> int:
    """The token whose numbers a step spells out (URL ``learn_token``; −1 = last real word)."""
    keep, tokens = _view(shared, trace)[0], trace.tokens.tokens
    stale = st.session_state.get("_learn_text") not in (None, shared.text)
    if stale or st.session_state.get("learn_token", -1) not in keep:
        st.session_state["learn_token"] = default_token(tokens, trace.tokens.special_t)
    st.session_state["_learn_text"] = shared.text
    return st.columns([1, 2])[0].selectbox(
        "Token to follow",
        keep.tolist(),
        key="learn_token",
        format_func=lambda i: f"{i}: {tokens[i]}",
    )


def _say(i: int, trace: Trace) -> str:
    return f"token {i} {safe.token(trace.tokens.tokens[i])}"


def _repeated_word(trace: Trace) -> None:
    """The first word piece that occurs twice in the reader's sentence: same static vector,
    different vectors after the layers."""
    ids, special = trace.tokens.input_ids_t, trace.tokens.special_t
    for i in range(trace.n_tokens):
        twins = np.flatnonzero((ids == ids[i]) & ~special)
        if not special[i] and twins.size > 1 and twins[0] == i:
            j = int(twins[1])
            same = float(cosine(trace.word_td[i], trace.word_td[j]))
            ctx = float(cosine(trace.hidden_ltd[-1, i], trace.hidden_ltd[-1, j]))
            st.markdown(
                f"In your sentence {safe.token(trace.tokens.tokens[i])} appears at positions "
                f"{i} and {j}: static cosine **{same:.4f}**, after the six layers **{ctx:.4f}**."
            )
            break


def step_tokens(shared: Shared, trace: Trace) -> None:
    st.markdown(text.TOKENS)
    keep, tokens = _view(shared, trace)
    pieces = " · ".join(safe.token(t) for t in trace.tokens.tokens)
    st.markdown(f"Your sentence is **{trace.n_tokens} tokens**: {pieces}")
    fig = make_embedding_strip(trace.word_td[keep], tokens, title="static embeddings")
    _chart(fig, "learn_strip", text.TOKENS_CAPTION)
    st.markdown(text.BANK)
    a, b = get_trace(shared.model, BANK_A), get_trace(shared.model, BANK_B)
    ia, ib = a.tokens.tokens.index("bank"), b.tokens.tokens.index("bank")
    wa, wb = a.word_td[ia], b.word_td[ib]
    static = float(cosine(wa, wb))
    after = float(cosine(a.hidden_ltd[-1, ia], b.hidden_ltd[-1, ib]))
    c1, c2 = st.columns(2)
    c1.metric("“bank”: cosine of the static vectors", f"{static:.4f}")
    c2.metric("“bank”: cosine after the six layers", f"{after:.4f}")
    st.latex(
        rf"\cos(\vec E^{{A}}_{{\text{{bank}}}}, \vec E^{{B}}_{{\text{{bank}}}}) = "
        rf"\frac{{{float(wa @ wb):.4f}}}{{{np.linalg.norm(wa):.4f} \times "
        rf"{np.linalg.norm(wb):.4f}}} = {static:.4f}"
    )
    st.caption(f"A = “{BANK_A}”, B = “{BANK_B}”.")
    _repeated_word(trace)


def step_positions(shared: Shared, trace: Trace) -> None:
    st.markdown(text.POSITIONS)
    n, d = trace.n_tokens, trace.config.d_model
    sinus = sinusoidal_positions(n, d)
    c1, c2 = st.columns(2)
    _chart(
        make_positions(trace.position_td, title="MiniLM: learned position vectors"),
        "learn_pos_learned",
        text.POSITIONS_CAPTION,
        c1,
    )
    _chart(
        make_positions(sinus, title="sinusoidal encoding"),
        "learn_pos_sin",
        text.SINUSOID_CAPTION,
        c2,
    )
    st.latex(
        rf"PE_{{(p,\,2i)}} = \sin\!\left(\frac{{p}}{{10000^{{2i/{d}}}}}\right),\quad "
        rf"PE_{{(p,\,2i+1)}} = \cos\!\left(\frac{{p}}{{10000^{{2i/{d}}}}}\right),\quad "
        rf"PE_{{(1,\,0)}} = \sin(1) = {sinus[1, 0]:.4f}"
    )
    far = n - 1
    near_l, far_l = (float(cosine(trace.position_td[1], trace.position_td[j])) for j in (2, far))
    near_s, far_s = (float(cosine(sinus[1], sinus[j])) for j in (2, far))
    st.markdown(
        f"Neighbours look alike, distant positions less: cosine of positions 1 and 2 is "
        f"**{near_l:.4f}** (learned) / **{near_s:.4f}** (sinusoidal); of positions 1 and {far}, "
        f"**{far_l:.4f}** / **{far_s:.4f}**."
    )
    i = default_token(trace.tokens.tokens, trace.tokens.special_t)
    w, p, t = trace.word_td[i], trace.position_td[i], trace.token_type_td[i]
    st.latex(
        rf"x_{{{i}}} = \mathrm{{LayerNorm}}(w_{{{i}}} + p_{{{i}}} + t):\quad "
        rf"\|w_{{{i}}}\| = {np.linalg.norm(w):.4f},\ \|p_{{{i}}}\| = {np.linalg.norm(p):.4f},\ "
        rf"\|t\| = {np.linalg.norm(t):.4f}"
    )
    a, b = get_trace(shared.model, BANK_A), get_trace(shared.model, BANK_B)
    ia, ib = a.tokens.tokens.index("bank"), b.tokens.tokens.index("bank")
    moved = float(cosine(a.embed_sum_td[ia], b.embed_sum_td[ib]))
    st.markdown(
        f"With positions added, “bank” at position {ia} of “{BANK_A}” and at position {ib} of "
        f"“{BANK_B}” no longer share a vector: cosine **{moved:.4f}** (it was 1 in step 1)."
    )


def step_queries(shared: Shared, trace: Trace) -> None:
    st.markdown(text.QUERIES)
    layer, head, e, d = shared.layer, shared.head, trace.config.d_head, trace.config.d_model
    i = _token(shared, trace)
    keep, tokens = _view(shared, trace)
    cols = [f"e{j}" for j in range(SHOWN_DIMS)]
    for col, name, arr in zip(st.columns(2), ("Q", "K"), (trace.q_lhqe, trace.k_lhke), strict=True):
        fig = make_small_matrix(
            arr[layer, head][keep, :SHOWN_DIMS],
            tokens,
            cols,
            title=f"{name}: first {SHOWN_DIMS} of {e} (L{layer} H{head})",
        )
        _chart(fig, f"learn_{name.lower()}", text.QUERIES_CAPTION, col)
    st.latex(
        rf"Q = E\,W_Q + b_Q:\quad [{trace.n_tokens} \times {d}] \cdot [{d} \times {e}] "
        rf"\to [{trace.n_tokens} \times {e}]"
    )
    weights = get_model(shared.model).weights
    pre = f"encoder.layer.{layer}.attention.self.query"
    w_q = weights[f"{pre}.weight"][head * e, :]  # row 0 of this head's slice: the e0 column
    b_q = float(weights[f"{pre}.bias"][head * e])
    x = trace.hidden_ltd[layer, i]
    terms = " + ".join(f"({x[j]:.3f})({w_q[j]:.3f})" for j in range(2))
    q0 = float(x.astype(np.float64) @ w_q + b_q)
    st.latex(
        rf"q_{{{i},0}} = \sum_{{d=0}}^{{{d - 1}}} E_{{{i},d}}\,W^Q_{{d,0}} + b^Q_0 = "
        rf"{terms} + \dots + ({b_q:.3f}) = {q0:.4f}"
    )
    st.markdown(
        f"Recomputed here for {_say(i, trace)} from the layer's input and its weights; the "
        f"forward pass holds q = **{trace.q_lhqe[layer, head, i, 0]:.4f}** in that cell."
    )


def step_scores(shared: Shared, trace: Trace) -> None:
    st.markdown(text.SCORES)
    layer, head, e = shared.layer, shared.head, trace.config.d_head
    i = _token(shared, trace)
    steps = attention_steps(trace.scores_lhqk[layer, head], e)
    raw = attention_steps(trace.scores_lhqk[layer, head], e, scale=False)
    explore.shared_only(trace, shared.model, shared.text, "learn_scores",
                        stages=("scores", "scaled"), controls=LAYER_HEAD)  # fmt: skip
    st.caption(text.SCORES_CAPTION)
    j = int(np.argmax(steps.pattern[i]))
    cell = cell_arithmetic(trace.q_lhqe[layer, head], trace.k_lhke[layer, head], steps, i, j)
    st.latex(
        rf"s_{{{i},{j}}} = q_{{{i}}} \cdot k_{{{j}}} = {cell.score:.4f},\qquad "
        rf"\frac{{s_{{{i},{j}}}}}{{\sqrt{{{e}}}}} = \frac{{{cell.score:.4f}}}{{{np.sqrt(e):.4f}}}"
        rf" = {cell.scaled:.4f}"
    )
    st.markdown(f"Query: {_say(i, trace)}; key: {_say(j, trace)}, the one it weights most.")
    c = st.columns(4)
    c[0].metric("mean row entropy, ÷√d_k (bits)", f"{row_entropy_bits(steps.pattern).mean():.3f}")
    c[1].metric("… without scaling (bits)", f"{row_entropy_bits(raw.pattern).mean():.3f}")
    c[2].metric("mean largest weight, ÷√d_k", f"{steps.pattern.max(axis=1).mean():.3f}")
    c[3].metric("… without scaling", f"{raw.pattern.max(axis=1).mean():.3f}")
    st.caption(
        f"This head (layer {layer}, head {head}) on your sentence; an even spread over "
        f"{trace.n_tokens} tokens would be {np.log2(trace.n_tokens):.3f} bits."
    )
    st.markdown(text.SATURATION)
    sat = learn_cache.saturation(shared.model, shared.text)
    _chart(make_dk_saturation(sat, current_d_k=e), "learn_saturation", text.SATURATION_CAPTION)
    st.latex(
        rf"d_k = {sat.d_ks[-1]}:\quad \overline{{\max_j a_{{ij}}}} = {sat.max_scaled[-1]:.3f}"
        rf"\ \text{{(scaled)}}\quad\text{{vs}}\quad {sat.max_unscaled[-1]:.3f}"
        rf"\ \text{{(unscaled)}}"
    )


def _padding(shared: Shared, trace: Trace) -> None:
    """The sentence plus [PAD] tokens in the first layer, with and without the padding mask."""
    head, n = shared.head, trace.n_tokens
    st.markdown(text.PADDING)
    padded, free, masked = learn_cache.padded_patterns(shared.model, shared.text, head)
    if len(padded) == n:
        st.info("Your text already fills all 512 positions: there is no room for padding.")
        return
    c1, c2 = st.columns(2)
    c1.plotly_chart(
        make_pattern_heatmap(free, padded, title="no padding mask"),
        key="learn_pad_free",
        config=CHART,
    )
    c2.plotly_chart(
        make_pattern_heatmap(masked, padded, title="with the padding mask"),
        key="learn_pad_masked",
        config=CHART,
    )
    st.caption(text.PADDING_CAPTION)
    leak = float(free[:n, n:].sum(axis=1).mean())
    exact = float(np.abs(masked[:n, :n] - trace.pattern_lhqk[0, head]).max())
    c = st.columns(3)
    c[0].metric("weight on [PAD], no mask (mean per row)", f"{leak:.4f}")
    c[1].metric("weight on [PAD], with the mask", f"{masked[:n, n:].sum(axis=1).max():.4f}")
    c[2].metric("largest change vs. no padding at all", f"{exact:.1e}")


def step_masking(shared: Shared, trace: Trace) -> None:
    st.markdown(text.MASKING)
    layer, head, e, n = shared.layer, shared.head, trace.config.d_head, trace.n_tokens
    i = _token(shared, trace)
    causal = attention_steps(trace.scores_lhqk[layer, head], e, causal=True)
    explore.shared_only(trace, shared.model, shared.text, "learn_masked",
                        stages=("masked", "pattern"), switches={"causal": True},
                        controls=LAYER_HEAD)  # fmt: skip
    st.caption(text.MASKING_CAPTION)
    before = float(trace.pattern_lhqk[layer, head, i, i + 1 :].sum())
    after = float(causal.pattern[i, i + 1 :].sum())
    st.latex(
        rf"x_{{{i},j}} = -\infty \ (j > {i}) \;\Rightarrow\; e^{{-\infty}} = 0:\quad "
        rf"\sum_{{j > {i}}} a_{{{i},j}} = {before:.4f} \to {after:.4f},\quad "
        rf"\sum_{{j \le {i}}} a_{{{i},j}} = {causal.pattern[i, : i + 1].sum():.4f}"
    )
    st.markdown(
        f"For {_say(i, trace)}: without the mask it gave **{before:.4f}** of its attention to "
        f"later tokens; with it, **{after:.4f}**. Largest weight above the diagonal: "
        f"**{causal.pattern[np.triu_indices(n, 1)].max(initial=0.0):.4f}**."
    )
    _padding(shared, trace)


def step_softmax(shared: Shared, trace: Trace) -> None:
    st.markdown(text.SOFTMAX)
    layer, head, e = shared.layer, shared.head, trace.config.d_head
    i = _token(shared, trace)
    keep = _view(shared, trace)[0]
    steps = attention_steps(trace.scores_lhqk[layer, head], e)
    explore.shared_only(trace, shared.model, shared.text, "learn_pattern", stages=("pattern",),
                        controls=LAYER_HEAD)  # fmt: skip
    st.caption(text.SOFTMAX_CAPTION)
    names = trace.tokens.tokens
    top = np.argsort(-steps.pattern, axis=1, kind="stable")[:, :3]
    table: dict[str, list] = {"query": [f"{q}: {names[q]}" for q in keep]}
    for rank, label in enumerate(("1st", "2nd", "3rd")):
        table[label] = [f"{top[q, rank]}: {names[top[q, rank]]}" for q in keep]
        table[f"share {rank + 1}"] = [float(steps.pattern[q, top[q, rank]]) for q in keep]
    table["row sum"] = [float(steps.pattern[q].sum(dtype=np.float64)) for q in keep]
    st.dataframe(
        table,
        key="learn_top3",
        hide_index=True,
        column_config={"share 1": NUM, "share 2": NUM, "share 3": NUM, "row sum": SUM},
    )
    st.caption(text.TOP3_CAPTION)
    j = int(top[i, 0])
    cell = cell_arithmetic(trace.q_lhqe[layer, head], trace.k_lhke[layer, head], steps, i, j)
    st.latex(
        rf"a_{{{i},{j}}} = \frac{{e^{{{cell.scaled:.4f} - {cell.row_max:.4f}}}}}"
        rf"{{\sum_k e^{{x_{{{i},k}} - {cell.row_max:.4f}}}}} = "
        rf"\frac{{{np.exp(cell.scaled - cell.row_max):.4f}}}{{{cell.row_exp_sum:.4f}}} = "
        rf"{cell.share:.4f},\qquad \sum_k a_{{{i},k}} = {steps.pattern[i].sum():.6f}"
    )
    shares = ", ".join(
        f"{safe.token(names[k])} {steps.pattern[i, k]:.1%}" for k in top[i] if k < len(names)
    )
    st.markdown(f"As a query, {_say(i, trace)} selects a blend of: {shares}, …")


def step_values(shared: Shared, trace: Trace) -> None:
    st.markdown(text.VALUES)
    layer, head = shared.layer, shared.head
    i = _token(shared, trace)
    keep, tokens = _view(shared, trace)
    up = value_update(trace, output_bias(get_model(shared.model), layer), layer, head, i)
    where = np.flatnonzero(keep == i)
    fig = make_value_update(
        up.weights_k[keep], up.v_norms_k[keep], tokens, int(where[0]) if where.size else None
    )
    _chart(fig, "learn_values", text.VALUES_CAPTION)
    terms = " + ".join(rf"{up.weights_k[j]:.3f}\,V_{{{j}}}" for j in largest_terms(up.weights_k, 3))
    st.latex(
        rf"z_{{{i}}} = \sum_j a_{{{i},j}} V_j = {terms} + \dots,\qquad "
        rf"\|z_{{{i}}}\| = {np.linalg.norm(up.z_e):.4f}"
    )
    gap = float(np.abs(up.z_e - trace.z_lhqe[layer, head, i]).max())
    st.latex(
        rf"\Delta E_{{{i}}} = \sum_{{h=0}}^{{{trace.config.n_heads - 1}}} z^{{(h)}}_{{{i}}}"
        rf" W_O^{{(h)}} + b_O,\qquad \|\Delta E_{{{i}}}\| = {np.linalg.norm(up.delta_d):.4f}"
    )
    st.latex(
        rf"E_{{{i}}} + \Delta E_{{{i}}}:\quad \|E_{{{i}}}\| = "
        rf"{np.linalg.norm(up.hidden_d):.4f} \to \|E_{{{i}}} + \Delta E_{{{i}}}\| = "
        rf"{np.linalg.norm(up.updated_d):.4f},\quad "
        rf"\cos(E_{{{i}}}, E_{{{i}}} + \Delta E_{{{i}}}) = "
        rf"{float(cosine(up.hidden_d, up.updated_d)):.4f}"
    )
    st.markdown(
        f"For {_say(i, trace)} in layer {layer}, head {head}. The weighted sum recomputed here "
        f"differs from the forward pass's z by at most **{gap:.1e}**."
    )
    strips = np.stack([up.hidden_d, up.delta_d, up.updated_d])
    fig = make_embedding_strip(strips, ["E", "ΔE", "E + ΔE"], token_axis=False, height=220)
    _chart(fig, "learn_value_strips", text.STRIPS_CAPTION)


def step_heads(shared: Shared, trace: Trace) -> None:
    st.markdown(text.HEADS)
    layer, head, n_heads = shared.layer, shared.head, trace.config.n_heads
    i = _token(shared, trace)
    cells = [col for _ in range(N_SIDE_BY_SIDE // 2) for col in st.columns(2)]
    for slot, col in enumerate(cells):
        with col:  # each its own head, fixed: no control or key changes it
            explore.shared_only(trace, shared.model, shared.text, f"learn_heads_{slot}",
                                stages=("pattern",), switches={"head": (head + slot) % n_heads},
                                controls=())  # fmt: skip
    st.caption(text.HEADS_CAPTION)
    proposals = trace.head_delta_hd(layer, i)
    fig = make_norm_bars(
        np.linalg.norm(proposals, axis=-1),
        [f"head {h}" for h in range(n_heads)],
        highlight=head,
        y_title="‖ΔE_h‖",
        title=f"proposals for token {i}",
    )
    _chart(fig, "learn_head_norms", text.HEAD_NORMS_CAPTION)
    total = proposals.astype(np.float64).sum(axis=0) + output_bias(get_model(shared.model), layer)
    delta = trace.delta_ltd[layer, i]
    diff = float(np.abs(total - delta).max())
    st.latex(
        rf"\Delta E_{{{i}}} = \sum_{{h=0}}^{{{n_heads - 1}}} \Delta E^{{(h)}}_{{{i}}} + b_O:"
        rf"\quad \Big\|\sum_h \Delta E^{{(h)}}_{{{i}}} + b_O\Big\| = {np.linalg.norm(total):.4f},"
        rf"\quad \|\Delta E_{{{i}}}\| = {np.linalg.norm(delta):.4f}"
    )
    st.metric("largest difference, Σ_h ΔE_h + b_O vs. the layer's ΔE", f"{diff:.1e}")


def step_block(shared: Shared, trace: Trace) -> None:
    st.markdown(text.BLOCK)
    layer = shared.layer
    i = _token(shared, trace)
    x, delta = trace.hidden_ltd[layer, i], trace.delta_ltd[layer, i]
    a, ffn = trace.attn_out_ltd[layer, i], trace.ffn_out_ltd[layer, i]
    stages = {
        "E (in)": x,
        "E + ΔE": x + delta,
        "a = LN(E + ΔE)": a,
        "FFN(a)": ffn,
        "a + FFN(a)": a + ffn,
        "LN(a + FFN(a)) (out)": trace.hidden_ltd[layer + 1, i],
    }
    labels, vectors = list(stages), np.stack(list(stages.values()))
    fig = make_norm_bars(
        np.linalg.norm(vectors, axis=-1),
        labels,
        y_title="‖vector‖",
        title=f"token {i} through layer {layer}",
    )
    _chart(fig, "learn_block_norms", text.BLOCK_NORMS_CAPTION)
    _chart(
        make_embedding_strip(vectors, labels, token_axis=False),
        "learn_block_strips",
        text.BLOCK_STRIPS_CAPTION,
    )
    s = (x + delta).astype(np.float64)
    st.latex(
        rf"\mathrm{{LN}}(x) = \gamma \odot \frac{{x - \mu}}{{\sigma}} + \beta:\quad "
        rf"\mu = {s.mean():.4f},\ \sigma = {s.std():.4f}"
        rf"\ \text{{for }} E_{{{i}}} + \Delta E_{{{i}}}"
    )
    g, d, f = trace.ffn_hidden_ltf[layer, i], trace.config.d_model, trace.config.d_ff
    st.latex(
        rf"\mathrm{{FFN}}(a) = W_2\,\mathrm{{GELU}}(W_1 a + b_1) + b_2:\quad {d} \to {f} \to {d},"
        rf"\quad {int((g > 0).sum())} \text{{ of }} {f} \text{{ GELU outputs}} > 0"
    )
    st.markdown(f"Following {_say(i, trace)} through all six blocks:")
    h = trace.hidden_ltd[:, i]
    st.dataframe(
        {
            "after block": ["embedding", *[f"block {b}" for b in range(len(h) - 1)]],
            "‖h‖": np.linalg.norm(h, axis=-1),
            "cos with previous": [1.0, *[float(cosine(h[b], h[b + 1])) for b in range(len(h) - 1)]],
            "cos with embedding": [float(cosine(h[0], v)) for v in h],
        },
        key="learn_stack",
        hide_index=True,
        column_config={c: NUM for c in ("‖h‖", "cos with previous", "cos with embedding")},
    )
    st.caption(text.STACK_CAPTION)


def step_decoder(shared: Shared, trace: Trace) -> None:
    st.info(text.DECODER, icon=":material/info:")
    c1, c2 = st.columns(2)
    source = c1.text_input("Source sentence (read by the encoder)", key="learn_src")
    target = c2.text_input("Target sentence (read by the decoder)", key="learn_tgt")
    if not source.strip() or not target.strip():
        st.info("Type both a source and a target sentence to run the demonstration.")
        return
    layer, head, e = shared.layer, shared.head, trace.config.d_head
    dec = learn_cache.decoder(shared.model, source, target, layer)
    for name, toks in (("source", dec.source), ("target", dec.target)):
        if toks.n_cut:
            st.warning(f"The {name} was cut to {len(toks)} tokens for this demonstration.")
    st.markdown(text.DECODER_STEPS)
    tgt, src = dec.target.tokens, dec.source.tokens
    self_p, cross_p = dec.self_attn.pattern_hqk[head], dec.cross.pattern_hqk[head]
    c1, c2 = st.columns(2)
    _chart(
        make_pattern_heatmap(self_p, tgt, title=f"masked self-attention, L{layer} H{head}"),
        "learn_dec_self",
        text.SELF_CAPTION,
        c1,
    )
    _chart(
        make_cross_pattern(cross_p, tgt, src, title=f"cross-attention, L{layer} H{head}"),
        "learn_dec_cross",
        text.CROSS_CAPTION,
        c2,
    )
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
            "looks most at (source)": [f"{k}: {src[k]}" for k in best],
            "weight": cross_p[np.arange(m), best],
        },
        key="learn_cross_table",
        hide_index=True,
        column_config={"weight": NUM},
    )


def step_cost(shared: Shared, trace: Trace) -> None:
    st.markdown(text.COST)
    points, load, cpus, one_thread = learn_cache.cost_points(shared.model)
    ns = np.array([p.n_tokens for p in points])
    secs = np.array([p.seconds for p in points])
    nbytes = np.array([p.attention_bytes for p in points])
    _chart(make_cost_curve(ns, secs, nbytes), "learn_cost", text.COST_CAPTION)
    st.dataframe(
        {
            "tokens n": ns,
            "forward pass (ms)": secs * 1e3,
            "scores + pattern (MB)": nbytes / 1e6,
            "memory ÷ first row": nbytes / nbytes[0],
            "(n ÷ first n)²": (ns / ns[0]) ** 2,
        },
        key="learn_cost_table",
        hide_index=True,
        column_config={
            "forward pass (ms)": st.column_config.NumberColumn(format="%.1f"),
            "scores + pattern (MB)": st.column_config.NumberColumn(format="%.3f"),
        },
    )
    st.caption(
        f"Measured while this machine's 1-minute load average was {load:.1f} on {cpus} cores"
        + (", with the matrix library held to one thread" if one_thread else "")
        + ": other programs running at the same time slow some passes down."
    )
    cfg, n = trace.config, trace.n_tokens
    own = attention_bytes(n, cfg.n_layers, cfg.n_heads)
    held = trace.scores_lhqk.nbytes + trace.pattern_lhqk.nbytes
    st.latex(
        rf"2 \times {cfg.n_layers} \times {cfg.n_heads} \times {n}^2 \times 4\ \text{{bytes}} = "
        rf"{own:,}\ \text{{bytes}}".replace(",", "{,}")
    )
    st.markdown(
        f"Your sentence: **{n} tokens**, whose trace holds **{held:,} bytes** of scores and "
        f"patterns (6 layers × 12 heads × 2 matrices of {n}×{n} float32 numbers)."
    )


STEPS: tuple[tuple[Render, str], ...] = (
    (step_tokens, "compare"),
    (step_positions, "build_head"),
    (step_queries, "pattern"),
    (step_scores, "build_head"),
    (step_masking, "pattern"),
    (step_softmax, "pattern"),
    (step_values, "values"),
    (step_heads, "all_heads"),
    (step_block, "embedding_shift"),
    (step_decoder, "build_head"),
    (step_cost, "pattern"),
)


def keep_choices() -> None:
    """Re-store the tour's widget values, which Streamlit forgets on steps that do not draw
    their widget, so a token or sentence chosen in one step is still there in the next."""
    for key in KEPT:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def _move(by: int) -> None:
    st.session_state["step"] = min(text.N_STEPS, max(1, st.session_state["step"] + by))


def navigation() -> int:
    """Progress bar, previous / next buttons and a step selector; returns the current step."""
    step = st.session_state["step"]
    st.progress(step / text.N_STEPS, text=f"Step {step} of {text.N_STEPS}")
    c1, c2, c3 = st.columns([1, 4, 1], vertical_alignment="center")
    c1.button(
        "Previous",
        key="learn_prev",
        on_click=_move,
        args=(-1,),
        disabled=step == 1,
        icon=":material/arrow_back:",
        width="stretch",
    )
    c2.selectbox(
        "Step",
        range(1, text.N_STEPS + 1),
        key="step",
        label_visibility="collapsed",
        format_func=lambda k: f"{k}. {text.TITLES[k - 1]}",
    )
    c3.button(
        "Next",
        key="learn_next",
        on_click=_move,
        args=(1,),
        disabled=step == text.N_STEPS,
        icon=":material/arrow_forward:",
        icon_position="right",
        width="stretch",
    )
    return step


def render(step: int, shared: Shared, trace: Trace) -> None:
    """Draw one step: its heading, its content, and the link to the page that goes further."""
    draw, page = STEPS[step - 1]
    st.header(f"{step}. {text.TITLES[step - 1]}")
    draw(shared, trace)
    st.divider()
    st.page_link(
        f"pages/{page}.py", label=f"Explore further: {PAGES[page]}", icon=":material/open_in_new:"
    )
    if step < text.N_STEPS:
        st.button(
            f"Next: {text.TITLES[step]}",
            key="learn_next_bottom",
            on_click=_move,
            args=(1,),
            icon=":material/arrow_forward:",
            icon_position="right",
        )
