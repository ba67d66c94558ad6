"""Step: what a longer context costs: time split between attention and the dense layers,
and the n² memory of the patterns; and the same lesson on a long text for the Long text page
(SmolLM2 from 128 to 2,048 tokens, timed live and fitted as a·n + b·n² + c)."""

from __future__ import annotations

import os

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attention_core import ModelConfig, attention_bytes, trace_nbytes
from attention_core.core.family import Trace
from attention_core.lessons.cost import (
    CostFit,
    CostPoint,
    fit_cost,
    long_sizes,
    pattern_bytes,
    seconds_left,
)
from attention_core.lessons.demos import SplitPoint, crossover_tokens
from attention_core.lessons.tour_numbers import attention_share, loglog_slope
from ui import glossary
from ui.cache import as_encoder_trace, get_model
from ui.router import Shared
from ui.tour import cache
from ui.tour.common import chart, engineers
from viz.learn_cost import make_cost_curve
from viz.learn_split import make_cost_split
from viz.long_cost import make_long_cost

TITLE = "Context size and cost"
PAGE = "pattern"  # the page that explores this step further (ui.registry)


def text(cfg: ModelConfig) -> str:
    cross = crossover_tokens(cfg)
    return (
        "Every layer and head computes one score for every pair of tokens: n² of them. Double "
        "the length and the score and pattern matrices take four times the memory. Time is "
        "another matter: per token, a layer also runs its dense layers (the Q, K, V and output "
        "projections and the feed-forward), whose work grows like n. Counting multiply-adds, "
        f"attention costs 2·n²·d and the dense layers 4·n·d² + 2·n·d·d_ff, so for MiniLM "
        f"(d = {cfg.d_model}, d_ff = {cfg.d_ff:,}) attention only catches up at "
        f"n = 2d + d_ff = {cross:,} tokens — beyond the {cfg.n_positions} positions the model "
        "can read. Below, this app's engine is timed on this machine (once per server; the time "
        "depends on the length, not on the words)."
    )


def render(shared: Shared, trace: Trace) -> None:
    glossary.say(text(trace.config))
    _split(shared)
    load_note = _whole_pass(shared, trace.config.n_layers)
    _memory(trace, load_note)


def _split(shared: Shared) -> None:
    """One layer's measured time: attention against the dense layers."""
    split = cache.split_points(shared.model)
    ns = np.array([p.n_tokens for p in split])
    att, dense = np.array([p.attention_s for p in split]), np.array([p.dense_s for p in split])
    chart(
        make_cost_split(ns, att, dense),
        "learn_cost_split",
        "How to read this: one layer timed at each length on random inputs of that length "
        "(the time depends on the length, not on the numbers), its time split into attention "
        "(Q·Kᵀ, softmax, pattern·V over all heads) and the dense layers. Hover for milliseconds.",
    )
    share = attention_share(att, dense)
    glossary.say(
        f"Measured: attention takes **{share[0]:.0%}** of a layer's time at {ns[0]} tokens and "
        f"**{share[-1]:.0%}** at {ns[-1]}; the dense layers take the rest. "
        + (
            "At every length MiniLM can read, the dense layers take most of the time."
            if share.max() < 0.5
            else "On this machine attention takes the larger part at some lengths: besides its "
            "multiply-adds it computes n² exponentials and moves n² numbers through memory."
        )
    )


def pass_words(n: int, whole_s: float, split: SplitPoint, n_layers: int) -> str:
    """The whole pass against the layers' own work from the split, at the same length."""
    layers_s = n_layers * (split.attention_s + split.dense_s)
    if split.n_tokens != n:
        return ""
    return (
        f"This pass is this app's engine, which also keeps every layer's scores, patterns and "
        f"more for the pages: at {n} tokens it took **{whole_s * 1e3:.0f} ms**, while the "
        f"{n_layers} layers' attention and dense work alone (the split above) take "
        f"**{layers_s * 1e3:.0f} ms**. The difference is the rest of the engine's work, writing "
        "those n² tables included, so this slope says how this app grows, not how a bare model "
        "would."
    )


def _whole_pass(shared: Shared, n_layers: int) -> str:
    """The whole forward pass timed, and the memory of its scores and patterns, per length."""
    points, load, cpus, one_thread = cache.cost_points(shared.model)
    ns = np.array([p.n_tokens for p in points])
    secs = np.array([p.seconds for p in points])
    nbytes = np.array([p.attention_bytes for p in points])
    chart(
        make_cost_curve(ns, secs, nbytes),
        "learn_cost",
        "How to read this: log-log axes, so n² is a straight line of slope 2 (dashed). Memory "
        "for the scores and patterns sits exactly on it. The whole forward pass's time is "
        "measured: compare its slope with the dashed line rather than assume it.",
    )
    slope = loglog_slope(ns, secs, last=3)
    split = cache.split_points(shared.model)[-1]
    glossary.say(
        f"Measured slope of the forward time over the last three lengths: **{slope:.2f}** "
        "(1 would be linear growth, 2 quadratic). "
        + pass_words(int(ns[-1]), float(secs[-1]), split, n_layers)
    )
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
    glossary.note(
        "Timed on this machine while other programs may be running: those slow some passes "
        "down, so compare the growth, not single times."
    )
    return (
        f"Whole pass: `attention_core.measure_cost`, measured while this machine's 1-minute "
        f"load average was {load:.1f} on {cpus} cores"
        + (", with BLAS held to one thread (threadpoolctl). " if one_thread else ". ")
    )


def _memory(trace: Trace, load_note: str) -> None:
    """What the reader's own sentence holds: n² numbers per layer, head and matrix."""
    cfg, n = trace.config, trace.n_tokens
    enc = as_encoder_trace(trace)  # the tour's MiniLM keeps every layer's arrays
    own = attention_bytes(n, cfg.n_layers, cfg.n_heads)
    numbers = own // 4
    st.latex(
        rf"2 \times {cfg.n_layers} \times {cfg.n_heads} \times {n}^2 = "
        rf"{numbers:,}\ \text{{numbers}}".replace(",", "{,}")
    )
    glossary.say(
        f"Your sentence: **{n} tokens**, whose scores and patterns are **{numbers:,} numbers** "
        f"({cfg.n_layers} layers × {cfg.n_heads} heads × 2 tables of {n}×{n}), "
        f"**{own / 1e6:.3f} MB** of memory."
    )
    with engineers():
        st.markdown(
            load_note + "Split: `attention_core.lessons.demos.measure_split` (layer 0's weights, "
            "random inputs, best of 3). Bytes: float32, 4 bytes a number: "
            f"`trace.scores_lhqk.nbytes + trace.pattern_lhqk.nbytes` = "
            f"{enc.scores_lhqk.nbytes + enc.pattern_lhqk.nbytes:,} bytes."
        )


def long_text_cost(model_name: str, text: str, key: str) -> None:
    """The same lesson on a long text (the Long text page): the model's forward timed at each
    of ``lessons.cost.long_sizes`` (once per server, each length under a progress bar, on the
    visitor's click: the longest take seconds each), fitted as a·n + b·n² + c, and the bytes
    its trace holds beside the patterns it does not hold."""
    cfg = get_model(model_name).config
    sizes = long_sizes(cfg)
    names = ", ".join(f"{n:,}" for n in sizes)
    if not st.toggle(
        f"Time {cfg.name}'s forward pass at {names} tokens (once per server; the longest "
        "lengths take a while)",
        key=key,
    ):
        return
    progress = st.progress(0.0)
    timed: tuple[CostPoint, ...] = ()
    for i, n in enumerate(sizes):
        left = seconds_left(timed, sizes)
        eta = "" if left is None else f"; about {left:.0f} s left, from the lengths timed so far"
        progress.progress(
            i / len(sizes), text=f"Timing {n:,} tokens ({i + 1} of {len(sizes)}{eta})…"
        )
        point, load = cache.long_cost_point(model_name, n, text)
        timed = (*timed, point)
    progress.empty()
    _long_cost_figure(cfg, list(timed))
    glossary.note(_busy_words(load, os.cpu_count() or 1))
    with engineers():
        st.markdown(
            f"`attention_core.lessons.cost.time_forward` per length and `fit_cost` (least squares "
            f"with a, b, c ≥ 0). Measured with BLAS held to one thread; 1-minute load average "
            f"{load:.1f} on {os.cpu_count() or 1} cores after the last length. Held: "
            f"`trace.nbytes` right after the pass; the trace store counts up to "
            f"{trace_nbytes(cfg, timed[-1].n_tokens) / 1e6:.0f} MB for a "
            f"{timed[-1].n_tokens:,}-token trace (`attention_core.trace_nbytes`: its layer cache "
            "full and its rollout made)."
        )


def _long_cost_figure(cfg: ModelConfig, timed: list[CostPoint]) -> None:
    ns = np.array([p.n_tokens for p in timed])
    secs = np.array([p.seconds for p in timed])
    held = np.array([p.held_bytes for p in timed])
    patterns = np.array([pattern_bytes(int(n), cfg.n_layers, cfg.n_heads) for n in ns])
    time_fit, memory_fit = fit_cost(ns, secs), fit_cost(ns, held)
    chart(
        make_long_cost(ns, secs, time_fit, held, memory_fit, patterns),
        "long_cost",
        "How to read this: the dots are measured on this machine, the orange line is the fit "
        "a·n + b·n² + c through them, the dotted line its n² part alone. Hover for values.",
    )
    share = time_fit.square_share(ns)
    shares = ", ".join(f"**{s:.0%}** at {n:,}" for s, n in zip(share, ns, strict=True))
    glossary.say(
        f"Measured: **{secs[0]:.2f} s** at {ns[0]:,} tokens, **{secs[-1]:.2f} s** at "
        f"{ns[-1]:,} ({ns[-1] / ns[0]:.0f}× the tokens, {secs[-1] / secs[0]:.1f}× the time). "
        f"From the fit, the part that grows like n² (every token scored against every other) "
        f"is {shares} of the time; the rest grows like n (each token's own matrix products) "
        "or stays fixed."
    )
    glossary.say(
        f"Memory: at {ns[-1]:,} tokens the trace holds **{held[-1] / 1e6:.0f} MB** (the "
        f"residual stream and what the views need), while the attention patterns of all "
        f"{cfg.n_layers} layers × {cfg.n_heads} heads would take {cfg.n_layers} × "
        f"{cfg.n_heads} × {ns[-1]:,}² × 4 bytes = **{patterns[-1] / 1e6:,.0f} MB**. The app does "
        "not hold them: it recomputes one layer's patterns when a view asks for them. "
        + _held_growth(memory_fit, ns)
    )


def _busy_words(load: float, cpus: int) -> str:
    """What the machine's load says about the timings (a load above the core count: passes
    waited for a core)."""
    if load > cpus:
        return (
            f"While these were timed this machine was busier than its {cpus} cores (load "
            f"{load:.1f}): each pass waited for a core now and then, so the times are slower and "
            "less regular than on a quiet machine, and the fit is rougher."
        )
    return (
        "Timed on this machine while other programs may be running: compare the growth, not "
        "single times."
    )


def _held_growth(fit: CostFit, ns: NDArray[np.int64]) -> str:
    """How what the trace holds grows, read from its fit's n² share at the longest length."""
    share = float(fit.square_share(ns)[-1])
    if share < 0.05:  # a stated threshold: under 5 % of the bytes, the n² part is not the story
        return "What it holds grows like n: its fit has no n² part worth naming (under 5%)."
    return f"Its fit puts {share:.0%} of those bytes in an n² part at {ns[-1]:,} tokens."
