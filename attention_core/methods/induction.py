"""The induction probe (Olsson et al. 2022, "In-context learning and induction heads"): a run of
random tokens read twice. The first copy cannot be predicted (the tokens are random); in the
second, a model that has learned to continue a repeat predicts each token from the first copy,
and the heads that do it (induction heads) put their weight one step right of the diagonal of
the earlier copy: on the token that followed the earlier copy of the current one.

The tokens are drawn (seeded) from the ordinary vocabulary, ids ``LOW_ID`` and up (no special or
unused tokens), and wrapped in what the model's tokenizer adds to any text ([CLS] … [SEP] for
MiniLM, nothing for SmolLM2). Each head's induction score is ``roles``' (TransformerLens's); for
a model that predicts the next token, the per-token loss −log p(token | tokens before it) shows
the copy being used, and knocking out the top induction heads shows whose work it was.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from attention_core.core.family import LoadedModel, Trace, predicts_next
from attention_core.core.tokens import Tokens
from attention_core.core.whatif import WhatIf
from attention_core.methods.roles import RoleScores, role_scores
from attention_core.models import run_model

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]

LOW_ID = 1000  # the probe's tokens are ids LOW_ID .. vocab-1: no special or unused tokens
PROBE_LEN = 50  # tokens per copy
PROBE_SEED = 0
N_KNOCK = 5  # how many of the top induction heads the knock-out takes away


def probe_ids(vocab_size: int, n: int = PROBE_LEN, seed: int = PROBE_SEED) -> I64:
    """``n`` seeded random ordinary token ids, then the same ``n`` again: [2n]."""
    if not 2 <= n <= 1000:
        raise ValueError(f"the probe's length must be 2..1000 tokens per copy, got {n}")
    once = np.random.default_rng(seed).integers(LOW_ID, vocab_size, size=n, dtype=np.int64)
    return np.concatenate([once, once])


def probe_tokens(model: LoadedModel, ids: I64) -> tuple[Tokens, int]:
    """``ids`` as the model's tokens, wrapped as its tokenizer wraps any text, and the position
    of the first probe token (1 after a [CLS], else 0)."""
    wrap = list(model.tokenizer.encode("").ids)  # [CLS, SEP] for BERT, [] for SmolLM2
    before, after = wrap[:1], wrap[1:]
    all_ids = np.asarray([*before, *ids.tolist(), *after], dtype=np.int64)
    if len(all_ids) > model.config.max_tokens:
        raise ValueError(
            f"the probe's {len(all_ids)} tokens exceed the model's limit of "
            f"{model.config.max_tokens}: choose at most "
            f"{(model.config.max_tokens - len(wrap)) // 2} tokens per copy"
        )
    special_t = np.zeros(len(all_ids), bool)
    special_t[: len(before)] = True
    special_t[len(all_ids) - len(after) :] = True
    tokens = Tokens(
        text="",
        tokens=tuple(str(model.tokenizer.decode([int(i)])) for i in all_ids),
        input_ids_t=all_ids,
        offsets_t2=np.zeros((len(all_ids), 2), np.int64),
        special_t=special_t,
        n_cut=0,
    )
    return tokens, len(before)


def token_loss(trace: Trace, start: int, n: int) -> F64 | None:
    """−log p of each of the ``n`` tokens from ``start`` given the tokens before it ([n]; the
    first is NaN: nothing comes before it), or None for a model that predicts no next token."""
    if not predicts_next(trace):
        return None
    ids = trace.tokens.input_ids_t[start + 1 : start + n]
    probs_tv = trace.next_probs_tv(start, start + n - 1)  # each predicts the token after it
    p_t = probs_tv[np.arange(n - 1), ids].astype(np.float64)
    return np.concatenate([[np.nan], -np.log(np.maximum(p_t, np.finfo(np.float64).tiny))])


@dataclass(frozen=True)
class Probe:
    """The probe's run: its ids, every head's scores on it, and (a next-token model) the loss."""

    ids: I64  # [2n] the probe's tokens (without the model's wrapping)
    start: int  # the position of ids[0] in the pass
    scores: RoleScores  # every role's score on the probe (induction is the one it is for)
    loss: F64 | None  # [2n] per-token loss; NaN at 0; None if the model predicts no token
    trace: Trace  # the pass itself (its patterns for the views)

    @property
    def n(self) -> int:
        return len(self.ids) // 2

    @property
    def induction_lh(self) -> F64:
        return self.scores.scores_lh["induction"]

    def mean_loss(self) -> tuple[float, float]:
        """The mean loss on the first copy (from its 2nd token) and on the second copy."""
        if self.loss is None:
            raise ValueError("this model predicts no next token: no loss")
        return float(np.nanmean(self.loss[: self.n])), float(np.mean(self.loss[self.n :]))

    def top_heads(self, k: int = N_KNOCK) -> tuple[tuple[int, int], ...]:
        """The ``k`` heads with the largest induction score, largest first."""
        flat = np.argsort(-self.induction_lh, axis=None, kind="stable")[:k]
        n_heads = self.induction_lh.shape[1]
        return tuple((int(i) // n_heads, int(i) % n_heads) for i in flat)


def run_probe(
    model: LoadedModel, n: int = PROBE_LEN, seed: int = PROBE_SEED, whatif: WhatIf = WhatIf()
) -> Probe:
    """Read ``n`` random tokens twice and measure every head and (if it predicts) the loss."""
    ids = probe_ids(model.config.vocab_size, n, seed)
    tokens, start = probe_tokens(model, ids)
    trace = run_model(model, tokens, whatif)
    loss = token_loss(trace, start, len(ids))
    return Probe(ids, start, role_scores(trace), loss, trace)


@dataclass(frozen=True)
class KnockedProbe:
    """The second copy's loss with the top induction heads knocked out, beside the intact run."""

    heads: tuple[tuple[int, int], ...]
    loss: F64  # [2n] per-token loss with ``heads`` knocked out
    intact: F64  # [2n] the same without

    def second_copy(self) -> tuple[float, float]:
        """Mean loss on the second copy: intact, knocked out."""
        n = len(self.loss) // 2
        return float(np.mean(self.intact[n:])), float(np.mean(self.loss[n:]))


def knock_probe(model: LoadedModel, probe: Probe, k: int = N_KNOCK) -> KnockedProbe:
    """Knock out ``probe``'s ``k`` top induction heads and measure the loss again."""
    if probe.loss is None:
        raise ValueError("this model predicts no next token: no loss to compare")
    heads = probe.top_heads(k)
    whatif = replace(probe.trace.whatif, knocked=heads)
    knocked = run_model(model, probe.trace.tokens, whatif)
    loss = token_loss(knocked, probe.start, len(probe.ids))
    assert loss is not None  # the same model
    return KnockedProbe(heads, loss, probe.loss)
