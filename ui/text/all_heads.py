"""All heads (pages/all_heads.py): the role map (what each head does by the stated rule), the menus
that sort and cut the grid, every head drawn small by the explorer, the heads as a table of their
role scores, and the way from a head to the pattern page."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
import streamlit as st
from numpy.typing import NDArray
from streamlit.delta_generator import DeltaGenerator

import explorer
from attention_core.core.family import Trace
from attention_core.lessons.head_order import list_heads, order_heads, role_figures, role_labels
from attention_core.lessons.head_words import head_sentences
from attention_core.methods.pack import MAX_TILE
from attention_core.methods.roles import LABELS, RULE
from ui import glossary, params, router, show
from ui.state.shared import FRAME
from ui.state.text import ALL_HEADS, AllHeads
from ui.text.cache import head_names, head_roles
from viz.role_map import make_role_map


@dataclass(frozen=True)
class Order:
    """The heads as the menus sort and cut them."""

    layers: list[int]  # the layers shown
    order: NDArray[np.int64]  # [layers shown, heads shown]: each layer's heads in order
    ranking: NDArray[np.float64] | None  # the role score sorted by [l, h] (None: by number)
    descending: bool
    figures: dict[str, NDArray[np.float64]]  # every role's score by label, each [l, h]
    jobs: list[list[str]]  # [l][h] each head's role label by the rule ("mixed": none)


def open_head(layer: int, head: int) -> None:
    """Open ``layer``/``head`` on the pattern page (the page switches on its next run)."""
    router.keep_shared_settings()
    FRAME.layer, FRAME.head = layer, head
    ALL_HEADS.pending = True


def open_head_from_grid() -> None:
    """Open the head clicked in the grid (the explorer's "open" trigger)."""
    picked = (ALL_HEADS.grid or {}).get("open") or {}
    layer, head = picked.get("layer"), picked.get("head")
    with contextlib.suppress(ValueError):  # only a drawn head can be clicked; check anyway
        open_head(params.accept("layer", layer), params.accept("head", head))


def open_picked_head() -> None:
    """After a head was picked (in the grid or the table): show it on the pattern page."""
    if ALL_HEADS.pending:
        ALL_HEADS.pending = False
        st.switch_page("pages/pattern.py")


def layer_choice(value: str) -> str:
    """The layer menu's words: "all" or a layer number."""
    return "all layers" if value == "all" else f"layer {value}"


def _groups(n_heads: int, n_kv_heads: int) -> list[str]:
    per = n_heads // n_kv_heads
    return [f"{g * per}–{g * per + per - 1}" for g in range(n_kv_heads)]


def rest_on(trace: Trace) -> str:
    """Where a sink head puts its weight: the first token, or [CLS]/[SEP] in an encoder."""
    return "the first token" if trace.config.causal else "[CLS]/[SEP]"


def intro(trace: Trace) -> None:
    cfg = trace.config
    glossary.note(
        f"Every attention head of every layer at once: {cfg.n_layers} layers × {cfg.n_heads} "
        f"heads = {cfg.n_layers * cfg.n_heads}, each drawn as a small pattern. The map below names "
        "each head by the job its numbers show on your sentence (reading the token before, an "
        f"earlier copy, itself, resting on {rest_on(trace)}, or an even spread), by one stated "
        "rule."
        + (
            f" Heads {', '.join(_groups(cfg.n_heads, cfg.n_kv_heads))} share one set of keys "
            "and values each (grouped-query attention): they ask different questions of the same "
            "keys."
            if cfg.n_kv_heads < cfg.n_heads
            else ""
        )
    )


def _heads_per_layer(model: str, n_heads: int, where: DeltaGenerator) -> int:
    """The "Heads per layer" slider. "Every head" stays every head when the visitor switches to
    a model with more or fewer heads."""
    shown_on, every = ALL_HEADS.every or (model, ALL_HEADS.top >= n_heads)
    switched = shown_on != model
    ALL_HEADS.top = n_heads if switched and every else min(ALL_HEADS.top, n_heads)
    top = where.slider(
        "Heads per layer",
        1,
        n_heads,
        key=AllHeads.top.key,
        help="Show the first N heads of each layer in the chosen order.",
    )
    ALL_HEADS.every = (model, top == n_heads)
    return int(top)


def role_map(shared: router.Shared, trace: Trace) -> None:
    """Every head coloured by its job on the visitor's sentence, the rule beside it."""
    names = head_names(shared.model, shared.text)
    counts: dict[str, int] = {}
    for row in names:
        for head in row:
            counts[head.role] = counts.get(head.role, 0) + 1
    left, right = st.columns([3, 1])
    said = head_sentences(head_roles(shared.model, shared.text), trace.tokens.tokens)
    show.plot(make_role_map(names, said), "ah_role_map", left)
    rule = RULE.text()
    glossary.say(f"**The rule.** {rule[0].upper()}{rule[1:]}.", where=right)
    glossary.say(
        "**On this sentence:** "
        + ", ".join(
            f"{n} {LABELS[role]}" for role, n in sorted(counts.items(), key=lambda c: -c[1])
        )
        + f" (of {trace.config.n_layers * trace.config.n_heads} heads).",
        where=right,
    )
    glossary.note(
        "How to read this: one cell per head, layer 0 at the top. The colour is the job the rule "
        "names the head by, the number its score: the share of the head's weight that lands "
        "where that job puts it (for 'broad', how even its spread is, 1 = fully even). Hover a "
        "cell for the head's scores in words. The names hold for this sentence: another "
        "sentence can give other scores.",
        where=left,
    )


def _sort_choice(labels: dict[str, str]) -> None:
    """A sort the model has no scores for (the closing [SEP]'s on a decoder): by number."""
    if ALL_HEADS.sort not in labels:
        ALL_HEADS.sort = "head"


def controls(shared: router.Shared, trace: Trace) -> Order:
    """The menus: sort by (head number or a role's score), highest first, which layers, how
    many heads per layer."""
    scores = head_roles(shared.model, shared.text)
    labels: dict[str, str] = {"head": "head number"} | {
        role: f"{label} score" for role, label in role_labels(scores).items()
    }
    _sort_choice(labels)
    c1, c2, c3, c4 = st.columns(4)
    c1.selectbox(
        "Sort heads by", list(labels), format_func=labels.__getitem__, key=AllHeads.sort.key
    )
    sort = ALL_HEADS.sort  # each widget's value, as its entry declares it
    c2.toggle("Highest first", key=AllHeads.descending.key, disabled=sort == "head")
    c3.selectbox(
        "Layers",
        ["all", *map(str, range(trace.config.n_layers))],
        key=AllHeads.layers.key,
        format_func=layer_choice,
    )
    top = _heads_per_layer(shared.model, trace.config.n_heads, c4)
    choice = ALL_HEADS.layers
    layers = list(range(trace.config.n_layers)) if choice == "all" else [int(choice)]
    ranking = scores.scores_lh[sort] if sort != "head" else None
    order = order_heads(trace.config.n_heads, layers, top, ranking, ALL_HEADS.descending)
    jobs = [[LABELS[h.role] for h in row] for row in head_names(shared.model, shared.text)]
    return Order(layers, order, ranking, ALL_HEADS.descending, role_figures(scores), jobs)


def _json_values(values_lh: NDArray[np.float64]) -> list[list[float | None]]:
    """[l][h] for JSON: a score with nothing to measure (NaN: one token) as null."""
    return [[None if np.isnan(v) else float(v) for v in row] for row in values_lh]


def grid(shared: router.Shared, trace: Trace, order: Order) -> None:
    """Every head shown, drawn small; a click opens it on the pattern page."""
    n_drawn = len(shared.visible(trace))
    factor = -(-n_drawn // MAX_TILE)
    explorer.mount_grid(
        trace,
        shared.model,
        shared.text,
        [(lay, row.tolist()) for lay, row in zip(order.layers, order.order, strict=True)],
        {label: _json_values(values) for label, values in order.figures.items()},
        shared.hide_special,
        open_head_from_grid,
        key=AllHeads.grid.key,
    )
    shrink = (
        f" With {n_drawn} tokens, each pixel is a {factor}×{factor} block: the weight {factor} "
        f"attending tokens give {factor} neighbouring tokens together, on average. The pattern "
        "page shows the head exactly."
        if factor > 1
        else ""
    )
    glossary.note(
        "How to read this: each square is one head; inside it, rows are the attending tokens "
        "(top to bottom) and columns the tokens they look at, bright = much weight. A bright "
        "diagonal means \u201clook at yourself\u201d, a line just below it \u201clook at the "
        "previous token\u201d, a bright column \u201clook at that one token\u201d. Click a square "
        "to open that head."
        + (" [CLS]/[SEP] are left out." if shared.hide_special else "")
        + shrink
    )
    glossary.note(
        "Pin a token (the bar above the grid) and every head shows only its row, what it attends "
        "to, or its column, who attends to it: scan all the heads for the one that links a word "
        "to another."
    )


def table(trace: Trace, order: Order) -> None:
    """The heads shown as rows of figures; a row picked, a button opens its head."""
    layer_n, head_n = list_heads(order.order, order.layers, order.ranking, order.descending)
    rows = {
        "layer": layer_n,
        "head": head_n,
        "job (by the rule)": [order.jobs[la][h] for la, h in zip(layer_n, head_n, strict=True)],
    } | {label: np.round(values[layer_n, head_n], 3) for label, values in order.figures.items()}
    picked = st.dataframe(
        rows,
        key=AllHeads.table.key,
        on_select="rerun",
        selection_mode="single-row",
        hide_index=True,
        column_config={
            label: st.column_config.NumberColumn(format="%.3f") for label in order.figures
        },
    )
    glossary.note(
        "How to read this: one row per head, its job by the rule, then its score for every job: "
        "the share of all its weight that lands where that job puts it (previous-token: on the "
        "token just before; duplicate-token: on an earlier copy of the same token; induction: on "
        "the token after such a copy; the sinks: on the first or the closing token; self: on "
        "itself). 'broad' is how even its spread is, 1 = fully even. Click a column title to "
        "sort, a row to pick it."
    )
    row = picked["selection"]["rows"][0] if picked["selection"]["rows"] else 0
    pick = int(layer_n[row]), int(head_n[row])
    st.button(
        f"Open layer {pick[0]}, head {pick[1]} on the pattern page",
        key=AllHeads.open_head.key,
        on_click=open_head,
        args=pick,
        type="primary",
        icon=":material/open_in_new:",
    )
