"""The text pages' session entries, one state per page (ui.state.entry says how an entry is read,
written and handed to its widget). The ``Url`` entries are the page's part of the link; the
others are its widgets and what it remembers between runs. A key is written here and nowhere
else; the tests poke the same strings (``at.session_state["ah_top"]``)."""

from __future__ import annotations

from typing import Any

from attention_core.lessons.head_order import SORTS
from ui.presets import DEFAULT_PROBES, MONEY_BANK, RIVER_BANK
from ui.state.entry import Entry, State, Url, boolean, choice, float_in, int_in, text
from ui.state.shared import D_MODEL, LAST_LAYER, LAST_TOKEN, N_HEADS


def all_or_layer(raw: str) -> str:
    """ "all", or a layer number as the page's menu writes it ("3", not "03")."""
    if raw == "all":
        return raw
    try:
        ok = str(int_in(0, LAST_LAYER)(raw)) == raw
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"must be all or a layer number (0 to {LAST_LAYER()})")
    return raw


class Pattern(State):
    """Attention pattern: the explorer's view of one head (its switches and cell)."""

    PAGE = "pattern"
    causal = Url("causal", False, boolean)
    scale = Url("scale", True, boolean)
    temp = Url("temp", 1.0, float_in(0.05, 5.0))
    transpose = Url("transpose", False, boolean)
    q = Url("q", 0, int_in(0, LAST_TOKEN))
    k = Url("k", 0, int_in(0, LAST_TOKEN))
    explorer: Entry[Any] = Entry("pattern_explorer", None)  # the explorer (its reports)
    numbers = Entry("pattern_numbers", False)  # the "as numbers" expander, open
    big_table = Entry("pattern_big_table", False)  # a table past TABLE_MAX rows, asked for
    npz = Entry("pattern_npz", False)  # the .npz's Prepare button


class AllHeads(State):
    """All heads: the grid's order and size, and the head to open on the pattern page."""

    PAGE = "all_heads"
    sort = Url(  # "head" or a role (attention_core.lessons.head_order.SORTS)
        "ah_sort",
        "head",
        choice("head", *SORTS),
    )
    descending = Url("ah_desc", True, boolean)
    layers = Url("ah_layers", "all", all_or_layer)
    top = Url("ah_top", 12, int_in(1, N_HEADS))
    # (model, whether every head was shown): "every head" stays every head on another model
    every: Entry[tuple[str, bool] | None] = Entry("_ah_every", None)
    pending = Entry("_ah_open", False)  # a head was picked: the next run opens the pattern page
    grid: Entry[Any] = Entry("ah_grid", None)  # the explorer's grid (its "open" report)
    table: Entry[Any] = Entry("ah_table", None)  # the table (its selected row)
    open_head = Entry("ah_open", False)  # the button opening the table's head


class Values(State):
    """Value updates ΔE."""

    PAGE = "values"
    token = Url("v_token", -1, int_in(-1, LAST_TOKEN))  # -1: the last real word


class EmbeddingShift(State):
    """Embedding shift: the probe words (the sentence's own, unless edited) and the token."""

    PAGE = "embedding_shift"
    probes = Url("es_probes", ", ".join(DEFAULT_PROBES), text)  # per preset
    token = Url("es_token", -1, int_in(-1, LAST_TOKEN))  # -1: closest to the probes
    sentence: Entry[str | None] = Entry("_es_text", None)  # what the probes were chosen for


class HideWord(State):
    """What did that word do? ("" and -1: the page's default for the sentence)."""

    PAGE = "hide_word"
    word = Url("hw_word", "", text)  # the word hidden from every token
    token = Url("hw_token", -1, int_in(-1, LAST_TOKEN))  # the token watched
    base = Url("hw_base", "", text)  # the word hidden for comparison
    probes = Url("hw_probes", ", ".join(DEFAULT_PROBES), text)  # per preset
    sentence: Entry[str | None] = Entry("_hw_text", None)  # what the choices were made for


class BuildHead(State):
    """Build your own head: the block's settings."""

    PAGE = "build_head"
    heads = Url("bh_heads", 4, int_in(1, 12))
    d_k = Url("bh_dk", 16, int_in(1, D_MODEL))
    source = Url("bh_source", "random", choice("random", "similarity", "pretrained"))
    seed = Url("bh_seed", 0, int_in(0, 9999))
    scale = Url("bh_scale", True, boolean)
    causal = Url("bh_causal", False, boolean)
    positions = Url("bh_pos", False, boolean)
    temp = Url("bh_temp", 1.0, float_in(0.05, 5.0))
    combine = Url("bh_combine", "sum", choice("sum", "concat"))
    PATTERN = "bh_pattern_"  # + the head: each head's explorer


class Compare(State):
    """Compare sentences: the two sentences and the word they share."""

    PAGE = "compare"
    a = Url("cmp_a", RIVER_BANK, text)
    b = Url("cmp_b", MONEY_BANK, text)
    word = Url("cmp_word", "bank", text)
    PATTERN = "cmp_pattern_"  # + "a" or "b": each sentence's explorer


class Home(State):
    """Start here: the sentence's head."""

    open_view = Entry("home_open_view", False)  # the button to the sentence's own view
    pattern: Entry[Any] = Entry("home_pattern", None)  # the explorer


class Decoder(State):
    """Inside a decoder."""

    rule = Entry("dec_rule", "closest")  # which rule picks the notes' head


class Generate(State):
    """Generate, token by token: one generation per session, and the widgets that step it."""

    prompt = Entry("gen_prompt", "")  # the box (it opens on the last run's prompt)
    run: Entry[Any] = Entry("gen_run", None)  # the Generation (attention_core), KV cache and all
    run_prompt: Entry[str | None] = Entry("gen_run_prompt", None)  # the prompt it started from
    times: Entry[dict[str, Any]] = Entry("gen_times", {})  # the latest passes' Timing by kind
    temp = Entry("gen_temp", 0.0)
    top_k = Entry("gen_top_k", 0)
    seed = Entry("gen_seed", 0)
    step = Entry("gen_step", False)  # Next token
    back = Entry("gen_back", False)
    reset = Entry("gen_reset", False)
    write = Entry("gen_write", False)  # Write this one
    heads: Entry[Any] = Entry("gen_heads", None)  # the explorer of the newest token
    PICK = "gen_pick_"  # + the text's length: each step's menu of candidates


PATTERN = Pattern()
ALL_HEADS = AllHeads()
VALUES = Values()
EMBEDDING_SHIFT = EmbeddingShift()
HIDE_WORD = HideWord()
BUILD_HEAD = BuildHead()
COMPARE = Compare()
GENERATE = Generate()
