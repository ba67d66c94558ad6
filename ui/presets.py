"""Example sentences from the notes, each with what to look at: a head, a token, and probe words
for the embedding-shift page. What the view shows is never written here: the page builds its
sentence from the engine's numbers (``attention_core.lessons.head_words``: the weight against an
even spread, the head's role by ``methods.roles.RULE``).

Each view's head was picked by a stated rule (``Preset.rule``, said on the page with
``picked_by``), measured on the packaged all-MiniLM-L6-v2:

- "word": the head where the followed token puts the most weight on a piece of another content
  word, leaving out the heads that give every token's weight to a neighbour (the rule of
  ``attention_core.methods.telling``, for this one token);
- "adjectives": the head whose smaller weight from the noun to its two adjectives is the largest,
  so the view names both.

tests/core/test_presets.py checks each rule against transformers' attentions, and
tests/app/test_presets_claims.py every number of every sentence. Probe words are never words of
their sentence (``probes_for`` drops the generic ones a typed sentence contains): a token
compared with a copy of its neighbour would only show that the neighbour is there.
No streamlit here, so the core tests can import it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

BANK_PROBES = ("shore", "stream", "money", "finance")  # two of each sense of "bank"
RIVER_BANK = "The river bank was muddy"  # the default sentence; "bank" the river's side
MONEY_BANK = "I made a deposit at the bank"  # the same word, the other sense
RULES = ("word", "adjectives")  # how a preset's head was picked (the module's docstring)


@dataclass(frozen=True)
class Preset:
    """One example sentence and the view that shows its point."""

    sentence: str  # the text as typed into the sidebar
    layer: int  # the layer of the head to open (counted from 0)
    head: int  # the head to open (counted from 0)
    token: int  # the query token to follow (position, [CLS] = 0)
    key: int  # the token it reads most among the words the rule allows (position)
    probes: tuple[str, ...]  # probe words for the embedding-shift page, none from the sentence
    rule: str  # how the head was picked: one of RULES
    also: tuple[int, ...] = ()  # other keys the view names with their weight (positions)

    @property
    def keys(self) -> tuple[int, ...]:
        """Every key the view names, ``key`` first."""
        return (self.key, *self.also)


CURATED: tuple[Preset, ...] = (
    Preset(RIVER_BANK, 1, 9, 3, 2, BANK_PROBES, "word"),
    Preset(MONEY_BANK, 5, 7, 7, 4, BANK_PROBES, "word"),
    Preset(
        "dirty quantum plumbing",
        3,
        11,
        3,
        2,
        ("physics", "pipe", "water", "dirt"),
        "adjectives",
        (1,),
    ),
    Preset(
        "the fluffy blue creature roamed the verdant forest",
        0,
        3,
        4,
        2,
        ("animal", "tree", "green", "soft"),
        "adjectives",
        (3,),
    ),
    Preset("Jane visits Africa", 1, 8, 1, 2, ("travel", "continent", "person", "city"), "word"),
    Preset(
        "The green, one-eyed creature is the star of the Disney Pixar movie. He's short, has "
        "small horns and a non-confrontational figure. He's not a very menacing monster.",
        0,
        10,
        42,
        7,
        ("Mike Wazowski", "cyclops", "cartoon", "horror"),
        "word",
    ),
)


def picked_by(preset: Preset, tokens: tuple[str, ...] | list[str]) -> str:
    """How ``preset``'s head was picked, in words (``tokens``: the pass's tokens)."""
    query = tokens[preset.token].removeprefix("▁")
    if preset.rule == "adjectives":
        named = " and ".join(f"“{tokens[k]}”" for k in preset.keys)
        return (
            f"the head whose smaller weight from “{query}” to {named} is the largest of all heads"
        )
    return (
        f"the head where “{query}” puts the most weight on another word (not [CLS] or [SEP], "
        "not a little word like “the”, and not a head that gives every token's weight to its "
        "neighbour)"
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
# What each shipped clip says (scripts/make_clips.py speaks these with espeak-ng).
SPOKEN: dict[str, str] = {
    "river": "The river bank was muddy after the rain.",
    "fluffy": "The fluffy blue creature roamed the verdant forest.",
    "animal": "The animal didn't cross the street because it was too tired.",
    "plumbing": "Dirty quantum plumbing needs a good plumber.",
}


def clip_names() -> list[str]:
    """The shipped example clips (file stems), in order."""
    return sorted(p.stem for p in CLIPS.glob("*.wav"))
