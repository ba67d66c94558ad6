"""Which roles the stated rule gives a head on the reference numbers, for the tests that check
what a page says a head is.

The scores are ``tests.roles_reference.reference_scores`` (transformers' attentions scored by
TransformerLens's head detector; no engine code), and an even spread's by the same functions
(``reference_even``). Only the naming
rule itself (``attention_core.methods.roles.RULE``: a margin above the even spread's share) is
shared with the engine: it is the statement under test, not a number.
"""

from __future__ import annotations

from attention_core.methods.roles import NAMED, RULE
from tests.roles_reference import reference_even, reference_scores

SINKS = ("first_token", "last_token")


def passes(model_key: str, text: str, role: str, layer: int, head: int) -> bool:
    """True when the reference score of ``role`` for the head passes ``RULE``."""
    score = float(reference_scores(model_key, text)[role][layer, head])
    return RULE.passes(role, score, reference_even(model_key, text)[role])


def reference_passing(model_key: str, text: str, layer: int, head: int) -> set[str]:
    """The named roles (``NAMED``) the head passes on the reference numbers."""
    roles = reference_scores(model_key, text)
    return {r for r in NAMED if r in roles and passes(model_key, text, r, layer, head)}


def reference_name(model_key: str, text: str, layer: int, head: int) -> str:
    """The head's name by the rule's order: a passing token job, else a passing sink, else
    "broad" when it passes, else "mixed"."""
    roles = reference_scores(model_key, text)
    found = sorted(
        reference_passing(model_key, text, layer, head), key=lambda r: -roles[r][layer, head]
    )
    jobs = [r for r in found if r not in SINKS]
    if found:
        return (jobs or found)[0]
    return "broad" if passes(model_key, text, "broad", layer, head) else "mixed"
