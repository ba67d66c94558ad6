"""Head knock-out: switch heads off and see what the model does without them.

A knocked-out head still computes its pattern, but its output z is zeroed before the output
projection W_O (``WhatIf.knocked``), so it adds nothing to any token's vector. The rest of the
model runs as trained. For a decoder the question is what it now predicts (``prediction_change``);
for an encoder, how a token's vector and the sentence embedding move (``vector_change``).
``head_importance`` knocks out each head alone and measures its effect on one prediction: for
SmolLM2 that is 270 reruns, each starting at the knocked layer (nothing below it changes), the
nine heads of a layer run side by side, and only the tokens up to the chosen position (a causal
model's later tokens cannot change it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attention_core.core.family import (
    LoadedModel,
    NextTokenTrace,
    Trace,
    pools_sentence,
    predicts_next,
)
from attention_core.core.functional import top_k
from attention_core.core.whatif import WhatIf
from attention_core.methods.geometry import cosine
from attention_core.models import family_of

F32 = NDArray[np.float32]
F64 = NDArray[np.float64]
Heads = tuple[tuple[int, int], ...]
Progress = Callable[[int, int], None]


def parse_heads(text: str) -> Heads:
    """ "3.7,0.1" -> ((0, 1), (3, 7)): layer.head pairs as the app labels them (from 0)."""
    pairs = []
    for item in (part.strip() for part in text.split(",")):
        layer, dot, head = item.partition(".")
        if not (dot and layer.isdigit() and head.isdigit()):
            raise ValueError(f"{item!r} is not LAYER.HEAD (e.g. 3.7 for layer 3, head 7)")
        pairs.append((int(layer), int(head)))
    return WhatIf(knocked=tuple(pairs)).knocked


def knock_out(model: LoadedModel, trace: Trace, heads: Iterable[tuple[int, int]]) -> Any:
    """The pass over ``trace``'s tokens again, under its switches, with ``heads`` knocked out
    (a trace of the same family as ``trace``)."""
    whatif = replace(trace.whatif, knocked=tuple(heads))
    return family_of(trace).run(model, trace.tokens, whatif)


@dataclass(frozen=True)
class PredictionChange:
    """A decoder's next-token distribution after ``position``, with and without some heads."""

    position: int
    before_ids: NDArray[np.int64]  # the 10 likeliest next tokens with every head
    before_probs: F32
    after_ids: NDArray[np.int64]  # and with the heads knocked out
    after_probs: F32
    lost_id: int  # the token whose probability fell most
    lost: tuple[float, float]  # its probability before, after
    gained_id: int  # the token whose probability rose most
    gained: tuple[float, float]


def prediction_change(
    before: NextTokenTrace, after: NextTokenTrace, position: int
) -> PredictionChange:
    """What knocking out ``after.whatif.knocked`` did to the prediction after ``position``."""
    p_v, q_v = before.next_probs_v(position), after.next_probs_v(position)
    diff_v = q_v.astype(np.float64) - p_v
    lost, gained = int(np.argmin(diff_v)), int(np.argmax(diff_v))
    (b_ids, b_probs), (a_ids, a_probs) = top_k(p_v[None], 10), top_k(q_v[None], 10)
    return PredictionChange(
        position,
        b_ids[0],
        b_probs[0],
        a_ids[0],
        a_probs[0],
        lost,
        (float(p_v[lost]), float(q_v[lost])),
        gained,
        (float(p_v[gained]), float(q_v[gained])),
    )


@dataclass(frozen=True)
class VectorChange:
    """How one token's vector differs with and without some heads, per hidden state (0 the
    embedding, i after block i): cosine 1 = unchanged."""

    token: int
    cosine_l: F64
    distance_l: F64
    sentence_cosine: float | None  # the sentence embedding's (None for a decoder)


def vector_change(before: Trace, after: Trace, token: int) -> VectorChange:
    """Compare ``token``'s vectors in two passes over the same tokens."""
    if not 0 <= token < before.n_tokens:
        raise ValueError(f"token {token} is outside 0..{before.n_tokens - 1}")
    a_ld = np.asarray(before.hidden_ltd[:, token], np.float64)
    b_ld = np.asarray(after.hidden_ltd[:, token], np.float64)
    sentence = None
    if pools_sentence(before) and pools_sentence(after):
        sentence = float(cosine(before.sentence_embedding_d, after.sentence_embedding_d))
    return VectorChange(token, cosine(a_ld, b_ld), np.linalg.norm(a_ld - b_ld, axis=-1), sentence)


@dataclass(frozen=True)
class Importance:
    """Each head knocked out alone, and its effect on one prediction ([layer, head])."""

    position: int  # the token whose prediction (decoder) or vector (encoder) is watched
    effect_lh: F64  # decoder: drop in the top token's probability; encoder: 1 − cosine
    measure: str  # what effect_lh measures, in words

    def ranked(self) -> list[tuple[int, int, float]]:
        """(layer, head, effect), the largest effect first (ties: lower layer, head first)."""
        flat = self.effect_lh.ravel()
        order = np.lexsort((np.arange(flat.size), -flat))
        n_heads = self.effect_lh.shape[1]
        return [(int(i) // n_heads, int(i) % n_heads, float(flat[i])) for i in order]


def head_importance(
    model: LoadedModel, trace: Trace, position: int, progress: Progress | None = None
) -> Importance:
    """Knock out every head alone (under ``trace``'s switches) and measure its effect at
    ``position``; ``progress(done, total)`` is told after each layer."""
    if not 0 <= position < trace.n_tokens:
        raise ValueError(f"position {position} is outside 0..{trace.n_tokens - 1}")
    if predicts_next(trace):
        return _decoder_importance(trace, position, progress or _quiet)
    return _encoder_importance(model, trace, position, progress or _quiet)


def _quiet(done: int, total: int) -> None:
    return None


def _encoder_importance(
    model: LoadedModel, trace: Trace, position: int, progress: Progress
) -> Importance:
    cfg = trace.config
    final_d = trace.hidden_ltd[-1, position]
    effect = np.zeros((cfg.n_layers, cfg.n_heads))
    for layer in range(cfg.n_layers):
        for head in range(cfg.n_heads):
            knocked = knock_out(model, trace, [(layer, head)])
            effect[layer, head] = 1.0 - cosine(final_d, knocked.hidden_ltd[-1, position])
        progress(layer + 1, cfg.n_layers)
    word = trace.tokens.tokens[position]
    return Importance(position, effect, f"1 − cosine of “{word}”'s final vector")


def _decoder_importance(trace: NextTokenTrace, position: int, progress: Progress) -> Importance:
    cfg, n = trace.config, position + 1  # later tokens cannot change this prediction
    top_id, top_p = (
        int(trace.next_top_ids_tk[position, 0]),
        float(trace.next_top_probs_tk[position, 0]),
    )
    effect = np.zeros((cfg.n_layers, cfg.n_heads))
    for layer in range(cfg.n_layers):
        z_hte = np.asarray(trace.z_lhqe[layer][:, :n], np.float32)
        head_delta_htd = z_hte @ trace.w_o_lhed[layer]  # each head's own update
        resid_td = trace.hidden_ltd[layer, :n] + trace.delta_ltd[layer, :n]
        resid_btd = resid_td[None] - head_delta_htd  # one variant per knocked head
        probs_bv = trace.next_probs_from(layer, resid_btd, position)
        effect[layer] = top_p - probs_bv[:, top_id]
        progress(layer + 1, cfg.n_layers)
    word = trace.token_text(top_id)
    return Importance(position, effect, f"drop in the probability of “{word}” next")
