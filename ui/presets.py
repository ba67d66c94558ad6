"""Example sentences from the notes, each with probe words for the embedding-shift page."""

from __future__ import annotations

PRESETS: dict[str, tuple[str, ...]] = {
    "The river bank was muddy": ("river", "water", "money", "finance"),
    "I made a deposit at the bank": ("money", "finance", "river", "water"),
    "dirty quantum plumbing": ("physics", "pipe", "water", "dirt"),
    "the fluffy blue creature roamed the verdant forest": ("animal", "tree", "green", "soft"),
    "Jane visits Africa": ("travel", "continent", "person", "city"),
    "Mike Wazowski is a one-eyed green monster who works at Monsters, Inc.": (
        "monster",
        "eye",
        "green",
        "company",
    ),
}
DEFAULT_SENTENCE = "The river bank was muddy"
DEFAULT_PROBES = ("river", "water", "money", "finance")


def probes_for(sentence: str) -> tuple[str, ...]:
    """Default probe words for a preset; generic ones for a sentence the user typed."""
    return PRESETS.get(sentence, DEFAULT_PROBES)
