"""Beyond the weights' session entries (ui.state.entry says how an entry is read, written and
handed to its widget)."""

from __future__ import annotations

from typing import Any

from attention_core import parse_heads
from ui.state.entry import Entry, State, Url, int_in
from ui.state.shared import LAST_HEAD, LAST_LAYER, LAST_TOKEN


def heads(raw: str) -> str:
    """Heads as the CLI's --knock takes them, "3.7,0.1" (layer.head from 0), each one the
    model's; "" for none chosen. Written back sorted, without repeats."""
    if not raw:
        return raw
    found = parse_heads(raw)
    top_layer, top_head = LAST_LAYER(), LAST_HEAD()
    if any(layer > top_layer or head > top_head for layer, head in found):
        raise ValueError(f"must be layer.head pairs within 0.0 to {top_layer}.{top_head}")
    return ",".join(f"{layer}.{head}" for layer, head in found)


class Beyond(State):
    """The heads knocked out, the token watched, and the importance sweep ("" and -1: the
    page's default, the sidebar's head and the last word)."""

    PAGE = "beyond"
    knock = Url("knock", "", heads)  # the heads knocked out, as the link writes them
    token = Url("bey_token", -1, int_in(-1, LAST_TOKEN))  # watched / predicted after
    chosen: Entry[list[str] | None] = Entry("bey_heads", None)  # the menu's "layer.head" labels
    sink = Entry("bey_sink", False)  # the button to the sentence's clearest sink
    switch = Entry("bey_switch", False)  # the button to the decoder (the lens)
    sweep = Entry("bey_sweep", False)  # the button that ranks every head
    # the sweep asked for, (model, text, token): kept until it is done, so a rerun that
    # interrupts it starts it again
    asked: Entry[tuple[str, str, int] | None] = Entry("_bey_sweep_asked", None)
    ranking: Entry[Any] = Entry("bey_rank", None)  # the ranking's table (its selected row)
    ranked: Entry[tuple[str, ...]] = Entry("_bey_ranked", ())  # its rows' heads, "layer.head"


BEYOND = Beyond()
