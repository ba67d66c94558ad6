"""Why the mask lets a decoder learn from every position of a text at once.

With the causal mask, row i of a pass reads only tokens 0 .. i, so the pass's guess after token i
is the guess a pass on the first i + 1 tokens alone would make. One pass over n tokens therefore
holds n − 1 fair exercises ("guess token i + 1 from tokens 0 .. i"), which training scores
together. ``one_pass`` measures both halves on a real decoder's trace: the probability the one
pass gave each real next token, and how far the guesses of a pass on a prefix alone are from the
whole pass's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from attention_core.core.family import LoadedModel, NextTokenTrace, predicts_next
from attention_core.core.tokens import Tokens
from attention_core.models import run_model

F64 = NDArray[np.float64]
CUT_MAX = 16  # the longest prefix rerun alone: the point holds at any length, and stays cheap


@dataclass(frozen=True)
class OnePass:
    """One decoder pass read as training reads it."""

    tokens: tuple[str, ...]
    next_prob_t: F64  # after token i (i = 0 .. n − 2): the probability given to token i + 1
    cut: int  # the prefix rerun alone: tokens 0 .. cut − 1
    gap: float  # largest |whole pass − prefix pass| over the prefix's next-token probabilities


def prefix(tokens: Tokens, cut: int) -> Tokens:
    """The first ``cut`` tokens of ``tokens``, as if the text had ended there."""
    if not 1 <= cut <= len(tokens):
        raise ValueError(f"cut must be in [1, {len(tokens)}], got {cut}")
    end = int(tokens.offsets_t2[cut - 1, 1])
    return replace(
        tokens,
        text=tokens.text[:end],
        tokens=tokens.tokens[:cut],
        input_ids_t=tokens.input_ids_t[:cut],
        offsets_t2=tokens.offsets_t2[:cut],
        special_t=tokens.special_t[:cut],
        n_cut=0,
    )


def one_pass(model: LoadedModel, trace: NextTokenTrace, cut: int | None = None) -> OnePass:
    """The probability ``trace``'s one pass gave each real next token, and the largest gap
    between its guesses after tokens 0 .. cut − 1 and those of a pass on that prefix alone
    (``cut``: half the tokens, at least 1 and at most ``CUT_MAX``, by default). Needs a causal
    model."""
    if not trace.config.causal:
        raise ValueError("one_pass reads a decoder's pass: this model looks both ways")
    n = trace.n_tokens
    if n < 2:
        raise ValueError("one_pass needs at least two tokens")
    cut = min(max(1, n // 2), CUT_MAX) if cut is None else cut
    ids_t = trace.tokens.input_ids_t
    probs_tv = np.asarray(trace.next_probs_tv(0, n - 1), np.float64)
    next_prob_t = probs_tv[np.arange(n - 1), ids_t[1:]]
    alone = run_model(model, prefix(trace.tokens, cut))
    if not predicts_next(alone):  # the same model as ``trace``'s: it does
        raise TypeError("the prefix pass predicts no next token")
    whole_kv = np.asarray(trace.next_probs_tv(0, cut), np.float64)
    alone_kv = np.asarray(alone.next_probs_tv(0, cut), np.float64)
    gap = float(np.abs(whole_kv - alone_kv).max())
    return OnePass(trace.tokens.tokens, next_prob_t, cut, gap)
