"""The notes' ΔE₂ = 0.55·V₀ + 0.4·V₁ + 0.05·V₂ computed on a real decoder head, and what
E'₂ = E₂ + ΔE₂ is in the model.

The notes' ΔE₂ is one head's weighted sum of value vectors: the head's ``z`` for "plumbing"
(``methods.values.value_update`` takes it apart). A real model cannot add that ``z`` to E₂ as it
is: ``z`` has d_head numbers and E₂ d_model. Each head's ``z`` goes through its slice of W_O
(d_head → d_model), the heads' results are added (plus b_O where the model has one) and that sum,
the layer's ΔE, is what the residual stream adds to E₂. The notes' own weights on the same value
vectors are kept as a what-if (``z_note_e``): not what the model computes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attention_core.core.family import Trace
from attention_core.methods.decoder_heads import NOTE_TABLE_QK, NOTE_WORDS
from attention_core.methods.geometry import cosine, split_words
from attention_core.methods.values import value_update

F64 = NDArray[np.float64]


@dataclass(frozen=True)
class PlumbingDelta:
    """One head's update for the last token of "plumbing", from its value vectors to E'₂."""

    layer: int
    head: int
    tokens: tuple[str, ...]  # the phrase's tokens ("dir", "ty", "▁quantum", "▁plumbing")
    word_t: tuple[int, ...]  # the notes' word (0, 1, 2) each token belongs to
    weights_k: F64  # the head's weights from "plumbing" to each token (its pattern row)
    v_ke: F64  # each token's value vector in this head
    z_e: F64  # Σ_k weight · value: the notes' ΔE₂, for this head
    note_weights_k: F64  # what-if: the notes' 0.55, 0.4, 0.05, a word's share split over its
    # pieces as the head splits it (evenly where the head gives the word nothing)
    z_note_e: F64  # what-if: Σ_k note weight · value
    hidden_d: F64  # E₂: "plumbing"'s vector entering the layer
    head_delta_d: F64  # this head's z through its slice of W_O (d_head → d_model)
    head_norms_h: F64  # the length of every head's proposal in the layer
    delta_d: F64  # the layer's ΔE, as the forward pass added it
    sum_error: float  # max |Σ_h proposals + b_O − ΔE|
    updated_d: F64  # E'₂ = E₂ + ΔE

    @property
    def word_weights(self) -> F64:
        """The head's weights summed per notes' word (the word table's "plumbing" row)."""
        out = np.zeros(len(NOTE_WORDS))
        np.add.at(out, np.asarray(self.word_t), self.weights_k)
        return out

    @property
    def note_agreement(self) -> float:
        """Cosine of the what-if ΔE₂ with the head's own (1 = the same direction)."""
        return float(cosine(self.z_note_e, self.z_e))


def note_weights(weights_k: NDArray[np.floating], word_t: tuple[int, ...]) -> F64:
    """The notes' "plumbing" row (0.55, 0.4, 0.05) spread over the tokens: each word's share split
    over its pieces in the proportions the head gives them (evenly when it gives them 0)."""
    weights, words = np.asarray(weights_k, np.float64), np.asarray(word_t)
    out = np.zeros_like(weights)
    for word, share in enumerate(NOTE_TABLE_QK[-1]):
        pieces = words == word
        total = weights[pieces].sum()
        split = weights[pieces] / total if total > 0 else np.full(pieces.sum(), 1 / pieces.sum())
        out[pieces] = share * split
    return out


def plumbing_delta(
    trace: Trace, bias_d: NDArray[np.floating], layer: int, head: int
) -> PlumbingDelta:
    """The notes' ΔE₂ on ``trace`` (a decoder's pass over the notes' phrase) in one head, for
    the last token of "plumbing", and the layer's real update; ``bias_d`` is the layer's b_O
    (``methods.values.output_bias``). ValueError when the trace is not the notes' three words."""
    spans = split_words(trace.tokens.tokens)
    if tuple(word.lower() for word, _ in spans) != NOTE_WORDS:
        raise ValueError(f"the trace reads {[w for w, _ in spans]}, not {list(NOTE_WORDS)}")
    word_t = tuple(i for i, (_, span) in enumerate(spans) for _ in span)
    plumbing = spans[-1][1][-1]
    up = value_update(trace, np.asarray(bias_d, np.float32), layer, head, plumbing)
    seen = plumbing + 1  # a decoder's row: itself and the tokens before it
    weights_k = np.asarray(up.weights_k[:seen], np.float64)
    v_ke = np.asarray(up.v_ke[:seen], np.float64)
    note_k = note_weights(weights_k, word_t[:seen])
    return PlumbingDelta(
        layer=layer,
        head=head,
        tokens=tuple(trace.tokens.tokens[:seen]),
        word_t=word_t[:seen],
        weights_k=weights_k,
        v_ke=v_ke,
        z_e=weights_k @ v_ke,  # [k] @ [k,e] -> [e]
        note_weights_k=note_k,
        z_note_e=note_k @ v_ke,  # [k] @ [k,e] -> [e]
        hidden_d=np.asarray(up.hidden_d, np.float64),
        head_delta_d=np.asarray(up.head_delta_d, np.float64),
        head_norms_h=np.asarray(up.head_norms_h, np.float64),
        delta_d=np.asarray(up.delta_d, np.float64),
        sum_error=up.sum_error,
        updated_d=np.asarray(up.updated_d, np.float64),
    )
