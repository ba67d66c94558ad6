"""Reading what a page says about a head, and checking it against the reference numbers.

A claim is the text after a head's name ("Layer L, head H" or "layer L, head H") up to the next
head's name in the same element. Inside it, the phrases that name what a head is by the rule
("previous-token head", "duplicate-token head", "induction head", "first-token sink", "[SEP]
sink", "sink", "self head", "broad", "mixed" or "no single job") are checked against the roles
that transformers' attentions, scored by TransformerLens's head detector
(``tests.roles_reference``), give the head under the stated rule (``tests.roles_named``); and the
shares quoted with a role ("38% of its weight … (an even spread: 12%)", "first-token sink 56%
(an even spread: 20%)", "91% as even") against the reference scores, to the percent shown.
"""

from __future__ import annotations

import re

from tests.roles_named import passes, reference_name
from tests.roles_reference import reference_even, reference_scores

HEAD = re.compile(r"\blayer (\d+), head (\d+)\b", re.IGNORECASE)
LABELS = {  # the words a page names a role with -> the role's key
    "previous-token head": "previous_token",
    "duplicate-token head": "duplicate_token",
    "induction head": "induction",
    "first-token sink": "first_token",
    "[SEP] sink": "last_token",
    "self head": "self",
}
SHARE_LABELS = {  # a mixed head's listed shares: "first-token sink 56% (an even spread: 20%)"
    "previous-token": "previous_token",
    "duplicate-token": "duplicate_token",
    "induction": "induction",
    "first-token sink": "first_token",
    "[SEP] sink": "last_token",
    "self": "self",
}
MIXED = re.compile(r"\bmixed\b|no single job", re.IGNORECASE)
BROAD = re.compile(r"\bbroad\b", re.IGNORECASE)
BARE_SINK = re.compile(r"\bsinks?\b", re.IGNORECASE)
PERCENT = 0.005 + 2e-4  # a share shown to the percent, and float32 against float64


def plain(text: str) -> str:
    """Markdown as read: escapes and bold marks dropped."""
    return re.sub(r"\\(.)", r"\1", text).replace("**", "")


def claims(text: str) -> list[tuple[int, int, str]]:
    """(layer, head, the text about it) for every head a text names."""
    text = plain(text)
    found = list(HEAD.finditer(text))
    ends = [m.start() for m in found[1:]] + [len(text)] if found else []
    return [
        (int(m.group(1)), int(m.group(2)), text[m.end() : end])
        for m, end in zip(found, ends, strict=True)
    ]


def names_a_role(segment: str) -> bool:
    """True when ``segment`` names any role."""
    lower = segment.lower()
    return bool(
        any(label.lower() in lower for label in LABELS)
        or MIXED.search(segment)
        or BROAD.search(segment)
        or BARE_SINK.search(segment)
    )


def _near(shown: str, value: float) -> bool:
    return abs(int(shown) / 100 - value) <= PERCENT


def _mixed(key: str, text: str, layer: int, head: int, segment: str) -> list[str]:
    problems = []
    name = reference_name(key, text, layer, head)
    if name != "mixed":
        problems.append(f"L{layer}H{head} said mixed, the reference names it {name}")
    scores, even = reference_scores(key, text), reference_even(key, text)
    labels = "|".join(re.escape(label) for label in SHARE_LABELS)
    pattern = rf"({labels}) (\d+)% \((?:an even spread: )?(\d+)%\)"
    for label, score, spread in re.findall(pattern, segment):
        role = SHARE_LABELS[label]
        if not _near(score, float(scores[role][layer, head])) or not _near(spread, even[role]):
            problems.append(f"L{layer}H{head} {label} {score}% ({spread}%) is not the reference's")
    return problems


def _broad(key: str, text: str, layer: int, head: int, segment: str) -> list[str]:
    problems = []
    name = reference_name(key, text, layer, head)
    if name != "broad":
        problems.append(f"L{layer}H{head} said broad, the reference names it {name}")
    for shown in re.findall(r"(\d+)% as even", segment):
        if not _near(shown, float(reference_scores(key, text)["broad"][layer, head])):
            problems.append(f"L{layer}H{head} broad {shown}% is not the reference's")
    return problems


def _named(key: str, text: str, layer: int, head: int, segment: str) -> list[str]:
    problems = []
    scores, even = reference_scores(key, text), reference_even(key, text)
    lower = segment.lower()
    for label, role in LABELS.items():
        if label.lower() not in lower:
            continue
        if role not in scores or not passes(key, text, role, layer, head):
            problems.append(f"L{layer}H{head} said {label}, its numbers do not reach the rule")
        shares = rf"{re.escape(label)}, (\d+)% of its weight [^()]*?\(an even spread: (\d+)%\)"
        for score, spread in re.findall(shares, segment, re.IGNORECASE):
            if not _near(score, float(scores[role][layer, head])) or not _near(spread, even[role]):
                problems.append(f"L{layer}H{head} {label} {score}% ({spread}%) off the reference")
    if BARE_SINK.search(segment) and not any(
        r in scores and passes(key, text, r, layer, head) for r in ("first_token", "last_token")
    ):
        problems.append(f"L{layer}H{head} said sink, its numbers do not reach the rule")
    return problems


def check(key: str, text: str, layer: int, head: int, segment: str) -> list[str]:
    """What is wrong with what ``segment`` says about the head on model ``key`` and ``text``."""
    if MIXED.search(segment):
        return _mixed(key, text, layer, head, segment)
    if BROAD.search(segment):
        return _broad(key, text, layer, head, segment)
    return _named(key, text, layer, head, segment)
