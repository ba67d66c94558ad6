"""All heads at once: every layer's heads as small patterns, their summary figures, sorting."""

import numpy as np
import streamlit as st

import explorer
from attention_core.lessons.head_order import list_heads, metric_labels, order_heads
from attention_core.methods.pack import MAX_TILE
from ui import callbacks, router
from ui.text.cache import head_figures


def _groups(n_heads: int, n_kv_heads: int) -> list[str]:
    per = n_heads // n_kv_heads
    return [f"{g * per}–{g * per + per - 1}" for g in range(n_kv_heads)]


shared = router.shared()
if st.session_state.pop("_ah_open", False):
    st.switch_page("pages/pattern.py")
trace = router.require_trace(shared)
st.title("All heads")
cfg = trace.config
rest_on = "the first token" if cfg.causal else "[CLS]/[SEP]"
st.caption(
    f"Every attention head of every layer at once: {cfg.n_layers} layers × {cfg.n_heads} heads = "
    f"{cfg.n_layers * cfg.n_heads}, each drawn as a small pattern. Heads in the same model learn "
    "different habits: some look at the previous word, some at themselves, many rest on "
    f"{rest_on} when they have nothing better to do."
    + (
        f" Heads {', '.join(_groups(cfg.n_heads, cfg.n_kv_heads))} share one set of keys and "
        "values each (grouped-query attention): they ask different questions of the same keys."
        if cfg.n_kv_heads < cfg.n_heads
        else ""
    )
)

labels = {"head": "head number"} | metric_labels(trace.config.causal)
c1, c2, c3, c4 = st.columns(4)
sort = c1.selectbox("Sort heads by", list(labels), format_func=labels.get, key="ah_sort")
descending = c2.toggle("Highest first", key="ah_desc", disabled=sort == "head")
layer_choice = c3.selectbox(
    "Layers",
    ["all", *map(str, range(trace.config.n_layers))],
    key="ah_layers",
    format_func=callbacks.layer_choice,
)
# "Every head" stays every head when the visitor switches to a model with more or fewer heads.
n_heads, state = trace.config.n_heads, st.session_state
shown_on, every = state.get("_ah_every", (shared.model, state["ah_top"] >= n_heads))
switched = shown_on != shared.model
state["ah_top"] = n_heads if switched and every else min(state["ah_top"], n_heads)
top = c4.slider(
    "Heads per layer",
    1,
    n_heads,
    key="ah_top",
    help="Show the first N heads of each layer in the chosen order.",
)
state["_ah_every"] = (shared.model, top == n_heads)

figures = head_figures(shared.model, shared.text)
n_drawn = len(shared.visible(trace))
factor = -(-n_drawn // MAX_TILE)
layers = list(range(trace.config.n_layers)) if layer_choice == "all" else [int(layer_choice)]
metric = labels[sort] if sort != "head" else None
ranking = figures.get(metric)
order = order_heads(trace.config.n_heads, layers, top, ranking, descending)
explorer.mount_grid(
    trace,
    shared.model,
    shared.text,
    [(lay, row.tolist()) for lay, row in zip(layers, order, strict=True)],
    {label: values.tolist() for label, values in figures.items()},
    shared.hide_special,
    callbacks.open_head_from_grid,
    key="ah_grid",
)
shrink = (
    f" With {n_drawn} tokens, each pixel is a {factor}×{factor} block: the weight {factor} "
    f"attending tokens give {factor} neighbouring tokens together, on average. The pattern page "
    "shows the head exactly."
    if factor > 1
    else ""
)
st.caption(
    "How to read this: each square is one head; inside it, rows are the attending tokens (top to "
    "bottom) and columns the tokens they look at, bright = much weight. A bright diagonal means "
    "\u201clook at yourself\u201d, a line just below it \u201clook at the previous token\u201d, "
    "a bright column \u201clook at that one token\u201d. Click a square to open that head."
    + (" [CLS]/[SEP] are left out." if shared.hide_special else "")
    + shrink
)

st.caption(
    "Pin a token (the bar above the grid) and every head shows only its row, what it attends to, "
    "or its column, who attends to it: scan all the heads for the one that links a word to another."
)

st.subheader("The heads as numbers")
layer_n, head_n = list_heads(order, layers, ranking, descending)
table = {"layer": layer_n, "head": head_n} | {
    label: np.round(values[layer_n, head_n], 3) for label, values in figures.items()
}
picked = st.dataframe(
    table,
    key="ah_table",
    on_select="rerun",
    selection_mode="single-row",
    hide_index=True,
    column_config={label: st.column_config.NumberColumn(format="%.3f") for label in figures},
)
st.caption(
    "How to read this: one row per head, figures averaged over every attending token. Entropy "
    "near 0 bits means a head looks at one token; high entropy means it spreads its attention. "
    f"The shares say how much weight goes to {rest_on}, the token just before, or itself. "
    "Click a column title to sort, a row to pick it."
)
row = picked["selection"]["rows"][0] if picked["selection"]["rows"] else 0
pick = int(layer_n[row]), int(head_n[row])
st.button(
    f"Open layer {pick[0]}, head {pick[1]} on the pattern page",
    key="ah_open",
    on_click=callbacks.open_head,
    args=pick,
    type="primary",
    icon=":material/open_in_new:",
)
