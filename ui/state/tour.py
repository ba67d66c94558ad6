"""The tour's session entries (pages/learn.py and its steps; ui.state.entry says how an entry
is read, written and handed to its widget)."""

from __future__ import annotations

from ui.state.entry import Entry, State, Url, int_in
from ui.state.shared import LAST_TOKEN
from ui.tour import N_STEPS


class Tour(State):
    """Learn step by step: the step shown, the token its numbers follow, and the navigation."""

    PAGE = "learn"
    step = Url("step", 1, int_in(1, N_STEPS))  # 1-based, bounded by ui.tour's registry
    token = Url("learn_token", -1, int_in(-1, LAST_TOKEN))  # -1: the last real word
    previous = Entry("learn_prev", False)  # the buttons
    next = Entry("learn_next", False)
    next_bottom = Entry("learn_next_bottom", False)
    clip: Entry[str | None] = Entry("learn_clip", None)  # the decoder step's example clip
    written: Entry[int | None] = Entry("learn_written", None)  # the writing step's token
    block_layer: Entry[int | None] = Entry("learn_block_layer", None)  # its decoder layer
    block_head: Entry[int | None] = Entry("learn_block_head", None)  # and head


TOUR = Tour()
