"""The notes' examples page: "bank" in a river sentence and in a money sentence, before attention
and after the model's layers, against probe words (the notes' "Bank + teller ... vault").

Every number is the engine's (attention_core.lessons.notes_bank), formatted here;
tests/app/test_page_notes.py checks each sentence's claim against the engine."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core.lessons.notes_bank import (
    BANK_MONEY,
    BANK_PROBES,
    BANK_RIVER,
    RIVER_SIDE,
    BankProbes,
    bank_probes,
)
from ui import glossary
from ui.cache import LABELS, get_trace
from ui.text.cache import read_probes
from ui.text.notes.tables import THREE, config, quote

MOVED = 0.999  # the two "bank" vectors' cosine below this after the layers: "moved apart"


# Worst case 4 × < 1 kB (a few cosines).
@st.cache_data(max_entries=4, show_spinner="Running the two sentences and the probe words…")
def get_bank(model: str) -> BankProbes:
    kept, probes_lpd, _ = read_probes(model, ", ".join(BANK_PROBES))
    river, money = get_trace(model, BANK_RIVER), get_trace(model, BANK_MONEY)
    return bank_probes(river, money, tuple(kept), probes_lpd)


def _listed(words: list[str]) -> str:
    quoted = [quote(w) for w in words]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def bank(model: str) -> None:
    """The notes' claim, the two sentences and why, the table, then the result in words."""
    glossary.say(
        "The notes: “the embedding for ‘bank’ is always the same … but by attending to it with "
        "Attention, we can change it’s position”, and “Bank + having river in sentence moves "
        "vector in matrix space closer to a sand dune, where Bank + teller in sentence moves it "
        f"closer to a financial worker”. Two sentences test it: {quote(BANK_RIVER)} and "
        f"{quote(BANK_MONEY)} "
        "(the second is the notes' own “make a deposit at the bank”). They are chosen so the "
        "test is fair: “bank” is the last word in both, at the same place, so it starts as the "
        "same vector; the words that tell its meaning come before it, so a decoder, whose words "
        "see only themselves and the words before them, is given them too; and no probe word is "
        "in either sentence, so no probe scores high just for being there (the notes' “river "
        "bank” and “bank vault” hold two of the probe words, and in “bank vault” the clue comes "
        "after “bank”)."
    )
    b = get_bank(model)
    river, money = "fisherman sentence", "deposit sentence"
    st.dataframe(
        {
            "probe word": list(b.probes),
            "before attention (both)": b.river_before_p,
            f"after the layers: {river}": b.river_after_p,
            f"after the layers: {money}": b.money_after_p,
            "nearer after": [river if r else money for r in b.river_nearer_p],
        },
        key="notes_bank",
        hide_index=True,
        column_config={
            "before attention (both)": THREE,
            f"after the layers: {river}": THREE,
            f"after the layers: {money}": THREE,
        },
    )
    glossary.say(_result(model, b))
    cfg = config(model)
    start = "plus the position's vector, rescaled" if cfg.positions == "learned" else "as it is"
    end = "" if cfg.post_norm else ", after its final rescaling (RMSNorm)"
    glossary.note(
        "Each number is the cosine of “bank” with the probe word run through the model on its "
        "own, both taken at the same point: before attention = the vector entering the first "
        f"layer (the embedding, {start}), after the layers = the model's last output{end}."
    )


def _result(model: str, b: BankProbes) -> str:
    """What the numbers say, in words that follow them."""
    n_layers = config(model).n_layers
    moved = "moved them apart" if b.same_after < MOVED else "left them the same"
    start = (
        f"Before attention the two “bank” vectors are the same (cosine {b.same_before:.3f}); "
        f"after {LABELS[model]}'s {n_layers} layers their cosine is **{b.same_after:.3f}**: the "
        f"layers {moved}."
    )
    probes, expected = list(b.probes), b.as_expected_p
    start += f" The notes' own words, fisherman sentence against deposit sentence: {_pairs(b)}."
    raw = b.raw_river_nearer_p
    if raw.all() or not raw.any():
        side = "fisherman" if raw.all() else "deposit"
        start += (
            f" Every probe, river words and money words alike, is nearer the {side} "
            f"sentence's “bank” (on average {b.river_after_p.mean():.3f} against "
            f"{b.money_after_p.mean():.3f}): a shift they all share. Compared with that shift,"
        )
    else:
        start += " Compared with the shift all the probes share,"
    if expected.all():
        return (
            f"{start} all {len(probes)} probes lean the way the notes expect: "
            f"{_listed([p for p in probes if p in RIVER_SIDE])} nearer the fisherman's “bank”, "
            f"{_listed([p for p in probes if p not in RIVER_SIDE])} nearer the deposit's."
        )
    if not expected.any():
        return f"{start} none of the {len(probes)} probes leans the way the notes expect."
    wrong = [p for p, ok in zip(probes, expected, strict=True) if not ok]
    return (
        f"{start} {int(np.sum(expected))} of the {len(probes)} probes lean the way the notes "
        f"expect; {_listed(wrong)} lean{'s' if len(wrong) == 1 else ''} the other way."
    )


def _pairs(b: BankProbes, words: tuple[str, ...] = ("teller", "vault")) -> str:
    """The notes' own probe words after the layers, one sentence against the other."""
    at = [(w, b.probes.index(w)) for w in words if w in b.probes]
    return "; ".join(
        f"{quote(w)} {b.river_after_p[i]:.3f} against {b.money_after_p[i]:.3f}" for w, i in at
    )
