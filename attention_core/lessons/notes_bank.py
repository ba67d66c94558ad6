"""The notes' "bank" probes: "bank" in a river sentence and in a money sentence, before any
attention and after the model's layers, each compared by cosine with probe words (each run
through the model on its own, at the same layer: ``methods.geometry.embed_words`` and
``probe_cosines``, as the "monster" probes of ``lessons.notes``).

The two sentences are chosen so the comparison is fair on both models:
- "bank" is the last word and stands at the same position in both, so the vector entering the
  first layer (the embedding, with MiniLM's position vector at that position) is the same in both;
- the words that tell the meaning ("fisherman", "muddy"; "deposit") come before "bank", so a
  decoder's "bank", which sees only itself and the words before it, is given them too;
- no probe word is in either sentence, so no probe scores high just for being in it.
The money sentence is the notes' own ("make a deposit at the bank").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attention_core.core.family import Trace
from attention_core.methods.geometry import cosine, probe_cosines, split_words, word_vectors

F64 = NDArray[np.float64]

BANK_RIVER = "the fisherman sat on the muddy bank"
BANK_MONEY = "she made a deposit at the bank"
BANK_PROBES = ("river", "water", "teller", "vault", "money")
RIVER_SIDE = ("river", "water")  # the probes the notes expect nearer the river sentence's "bank"


@dataclass(frozen=True)
class BankProbes:
    """ "bank" in the two sentences against the probes, before attention (the vector entering
    the first layer) and after the last layer."""

    probes: tuple[str, ...]
    river_before_p: F64  # cosine with each probe, river sentence, entering the first layer
    money_before_p: F64
    river_after_p: F64  # ... after the model's last layer
    money_after_p: F64
    same_before: float  # cosine of the two "bank" vectors entering the first layer
    same_after: float  # ... after the last layer

    @property
    def raw_river_nearer_p(self) -> NDArray[np.bool_]:
        """True where the river sentence's "bank" is nearer the probe after the layers, by the
        raw cosines (which can all move together: see ``river_nearer_p``)."""
        return self.river_after_p > self.money_after_p

    @property
    def shared_shift(self) -> float:
        """How much nearer every probe is, on average, to the money sentence's "bank" than to
        the river sentence's after the layers: the drift all probes share."""
        return float(self.money_after_p.mean() - self.river_after_p.mean())

    @property
    def river_nearer_p(self) -> NDArray[np.bool_]:
        """True where the river sentence's "bank" is nearer the probe than the money
        sentence's, beyond the shift every probe shares (each cosine less its sentence's mean
        over the probes, as the Embedding shift page reads probes)."""
        river = self.river_after_p - self.river_after_p.mean()
        money = self.money_after_p - self.money_after_p.mean()
        return river > money

    @property
    def as_expected_p(self) -> NDArray[np.bool_]:
        """True where a probe leans the way the notes expect: the river words nearer the river
        sentence's "bank", the money words nearer the money sentence's."""
        river = np.array([p in RIVER_SIDE for p in self.probes])
        return self.river_nearer_p == river


def bank_vector(trace: Trace) -> F64:
    """The last "bank" of the trace, the mean of its pieces, at every hidden state, [l, d]."""
    hits = [span for word, span in split_words(trace.tokens.tokens) if word.lower() == "bank"]
    if not hits:
        raise ValueError(f"'bank' is not a word of {trace.tokens.text!r}")
    return word_vectors(trace.hidden_ltd, hits[-1])


def bank_probes(
    river: Trace, money: Trace, probes: tuple[str, ...], probes_lpd: NDArray[np.floating]
) -> BankProbes:
    """Compare "bank" of ``river`` and ``money`` with ``probes`` (their vectors [l, p, d] from
    ``embed_words``) at the first and the last hidden state."""
    river_ld, money_ld = bank_vector(river), bank_vector(money)
    river_lp = probe_cosines(river_ld, probes_lpd).raw_lp
    money_lp = probe_cosines(money_ld, probes_lpd).raw_lp
    return BankProbes(
        probes=tuple(probes),
        river_before_p=river_lp[0],
        money_before_p=money_lp[0],
        river_after_p=river_lp[-1],
        money_after_p=money_lp[-1],
        same_before=float(cosine(river_ld[0], money_ld[0])),
        same_after=float(cosine(river_ld[-1], money_ld[-1])),
    )
