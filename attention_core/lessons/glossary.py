"""The glossary: every term a learner meets, each in one plain sentence true of the three models
(MiniLM the encoder, SmolLM2 the decoder, Whisper the encoder-decoder; where they differ the
sentence says so). The pages hover a term's sentence where it first appears (``ui.glossary``)
and the glossary page lists them all, in this order.

Matching rules, one ``pattern`` per term: whole words only (``key`` never fires inside
``keyboard``, ``bias`` never inside ``biased``, ``token`` never inside ``tokenizer``), plurals
and the usual endings spelled out; case ignored except for names written one way (GELU, RMSNorm,
PCA, KV cache, W_Q). Text inside ``$…$`` LaTeX is matched like any other: a formula that shows
``\\sqrt{d_k}`` names √d_k as surely as the words do.

The entries live in ``glossary.toml`` beside this module, words apart from code, so a teacher can
edit a sentence without reading Python. To add a term: one ``[[term]]`` there, where a learner
would meet it, its sentence one plain sentence ending in a full stop (tests/core/test_glossary.py
checks), its pattern tried on the phrases the pages use.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

IGNORE = re.IGNORECASE


@dataclass(frozen=True)
class Term:
    """One glossary entry: its name as the glossary lists it, the words that name it on a page,
    and its one-sentence explanation."""

    name: str
    pattern: re.Pattern[str]
    sentence: str


def _term(name: str, pattern: str, sentence: str, flags: int = IGNORE) -> Term:
    return Term(name, re.compile(pattern, flags), sentence)


SOURCE = Path(__file__).with_name("glossary.toml")  # the entries, in the order listed


def load_terms(path: Path = SOURCE) -> tuple[Term, ...]:
    """Every entry of the glossary file ``path`` (``[[term]]`` tables: name, pattern, sentence,
    and ``case = "exact"`` for a name written one way only)."""
    with path.open("rb") as f:
        entries = tomllib.load(f)["term"]
    return tuple(
        _term(e["name"], e["pattern"], e["sentence"], 0 if e.get("case") == "exact" else IGNORE)
        for e in entries
    )


TERMS: tuple[Term, ...] = load_terms()


def terms_in(text: str) -> tuple[Term, ...]:
    """The terms ``text`` names, in the order of their first mention (ties: glossary order). A
    match inside a longer term's match is not a mention: "sentence embedding" names the sentence
    embedding, not an embedding; "logit lens" not a logit."""
    spans = [[m.span() for m in t.pattern.finditer(text)] for t in TERMS]
    every = [span for found in spans for span in found]

    def inside(a: tuple[int, int]) -> bool:
        return any(b[0] <= a[0] and a[1] <= b[1] and b[1] - b[0] > a[1] - a[0] for b in every)

    found = [
        (free[0][0], k) for k, s in enumerate(spans) if (free := [a for a in s if not inside(a)])
    ]
    return tuple(TERMS[k] for _, k in sorted(found))


def help_text(terms: tuple[Term, ...]) -> str:
    """The hover of ``terms``: one Markdown paragraph per term, its name in bold."""
    return "\n\n".join(f"**{t.name}**: {t.sentence}" for t in terms)


def term(name: str) -> Term:
    """The term called ``name``; KeyError if there is none."""
    for t in TERMS:
        if t.name == name:
            return t
    raise KeyError(name)
