"""Which roles the stated rule gives a head on the reference numbers, for the tests that check
what a page says a head is.

The scores are ``tests.roles_reference.reference_scores`` (transformers' attentions scored by
TransformerLens's head detector; no engine code). An even spread's scores come from the same
functions on a pattern that spreads each row evenly over the keys it may see. Only the naming
rule itself (``attention_core.methods.roles.RULE``: a floor and a multiple of the even spread) is
shared with the engine: it is the statement under test, not a number.
"""

from __future__ import annotations

import functools

import numpy as np

from attention_core.methods.roles import NAMED, RULE
from tests.core.oracles import oracle
from tests.roles_reference import detector_scores, pattern_scores, reference_scores

SINKS = ("first_token", "last_token")


@functools.cache
def reference_even(model_key: str, text: str) -> dict[str, float]:
    """Each role's score for a head spreading every row evenly over the keys it may see."""
    ora = oracle(model_key)
    ids = ora.ids(text)
    n, causal = len(ids), ora.family == "llama"
    seen = np.tril(np.ones((n, n))) if causal else np.ones((n, n))
    even = (seen / seen.sum(-1, keepdims=True))[None, None]
    scores = detector_scores(even, ids) | pattern_scores(even, causal, closing=not causal)
    return {role: float(v[0, 0]) for role, v in scores.items()}


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
