"""Example sentences from the notes, each with what to look at: a head, a token, probe words for the
embedding-shift page, and one measured claim.

Every layer, head and token was chosen by measuring the packaged all-MiniLM-L6-v2 (the telling
head of ``attention_core.methods.telling`` and the patterns themselves; for the two adjective
examples the
head whose smaller weight on the noun's two adjectives is the largest, so the claim names both),
and tests/core/test_presets.py and tests/app/test_presets_claims.py recompute every number of
every claim with the engine. Probe words are never words of their sentence
(``probes_for`` drops the generic ones a typed sentence contains): a token compared with a copy
of its neighbour would only show that the neighbour is there.
No streamlit here, so the core tests can import it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

BANK_PROBES = ("shore", "stream", "money", "finance")  # two of each sense of "bank"
RIVER_BANK = "The river bank was muddy"  # the default sentence; "bank" the river's side
MONEY_BANK = "I made a deposit at the bank"  # the same word, the other sense


@dataclass(frozen=True)
class Preset:
    """One example sentence and the view that shows its point."""

    sentence: str  # the text as typed into the sidebar
    layer: int  # the layer of the head to open (counted from 0)
    head: int  # the head to open (counted from 0)
    token: int  # the query token to follow (position, [CLS] = 0)
    key: int  # the token it reads, the one the claim names (position)
    probes: tuple[str, ...]  # probe words for the embedding-shift page, none from the sentence
    claim: str  # what the view shows, in one sentence, with the engine's number
    also: tuple[int, ...] = ()  # other keys the claim names with their weight (positions)


CURATED: tuple[Preset, ...] = (
    Preset(
        RIVER_BANK,
        1,
        9,
        3,
        2,
        BANK_PROBES,
        "Layer 1, head 9: “bank” puts 0.750 of its attention on “river”, the word that says "
        "which kind of bank this is.",
    ),
    Preset(
        MONEY_BANK,
        5,
        7,
        7,
        4,
        BANK_PROBES,
        "Layer 5, head 7: “bank” puts 0.670 of its attention on “deposit”, the word that makes it "
        "the bank that keeps money.",
    ),
    Preset(
        "dirty quantum plumbing",
        3,
        11,
        3,
        2,
        ("physics", "pipe", "water", "dirt"),
        "Layer 3, head 11: “plumbing” puts 0.312 of its attention on “quantum” and 0.210 on "
        "“dirty”: the two words that describe it get 0.522 together.",
        (1,),
    ),
    Preset(
        "the fluffy blue creature roamed the verdant forest",
        0,
        3,
        4,
        2,
        ("animal", "tree", "green", "soft"),
        "Layer 0, head 3: “creature” puts 0.187 of its attention on “fluffy” and 0.135 on “blue”: "
        "the two words that describe it get 0.321 together.",
        (3,),
    ),
    Preset(
        "Jane visits Africa",
        1,
        8,
        1,
        2,
        ("travel", "continent", "person", "city"),
        "Layer 1, head 8: “jane” puts 0.825 of its attention on “visits”, what Jane does.",
    ),
    Preset(
        "The green, one-eyed creature is the star of the Disney Pixar movie. He's short, has "
        "small horns and a non-confrontational figure. He's not a very menacing monster.",
        0,
        10,
        42,
        7,
        ("Mike Wazowski", "cyclops", "cartoon", "horror"),
        "Layer 0, head 10: “monster” puts 0.416 of its attention on “creature”, the word it "
        "refers back to.",
    ),
)

PRESETS: dict[str, tuple[str, ...]] = {preset.sentence: preset.probes for preset in CURATED}
DEFAULT_SENTENCE = RIVER_BANK
# For sentences the user types (and the URL defaults of the pages with probe words).
DEFAULT_PROBES = ("river", "water", "money", "finance")


def probes_for(sentence: str) -> tuple[str, ...]:
    """Default probe words for a preset; for a sentence the user typed, the generic ones that are
    not words of it (a probe compared with its own copy in the sentence shows only that it is
    there)."""
    if sentence in PRESETS:
        return PRESETS[sentence]
    words = set(re.findall(r"\w+", sentence.lower()))
    return tuple(probe for probe in DEFAULT_PROBES if probe not in words)


def auto_probes(current: str, previous: str | None, sentence: str) -> str:
    """The probe box's text for ``sentence``: the visitor's own probes when they edited them,
    else the sentence's defaults. Unedited is the default for the sentence shown before
    (``previous``) or the URL's default: a page's widget state is dropped while another page
    shows, and comes back as that default."""
    unedited = {", ".join(probes_for(previous or "")), ", ".join(DEFAULT_PROBES)}
    return ", ".join(probes_for(sentence)) if current in unedited else current


def curated(sentence: str, model: str = "minilm") -> Preset | None:
    """The curated view of a preset sentence; None for a sentence the user typed, or on another
    model than MiniLM (the views were measured on it: other models have other heads and pieces)."""
    if model != "minilm":
        return None
    return next((preset for preset in CURATED if preset.sentence == sentence), None)


CLIPS = Path(__file__).resolve().parents[1] / "examples" / "clips"  # the Listen page's examples


def clip_names() -> list[str]:
    """The shipped example clips (file stems), in order."""
    return sorted(p.stem for p in CLIPS.glob("*.wav"))
