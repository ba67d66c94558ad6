"""The notes' examples measured on a real model, each by a stated rule, for the page that prints
them beside the notes' own numbers.

- "fluffy blue creature ... verdant forest": the head whose weakest noun → adjective weight is
  largest (what a head is by the roles' rule is said by ``lessons.head_words``).
- "Jane visits Africa": the head closest to the notes' soft SELECT table, and one query's whole
  path through it: query · key, scaled, softmax, a weighted sum of values.
- The dot product against cosine similarity on the same query and keys, and what a longer key
  does to each.
- The "monster" vector with and without the Pixar context, against probe words.
- The context window: the size of an attention pattern, now and at the model's longest input.

Works on a BERT ``Trace`` and a Llama ``LlamaTrace`` alike (the fields both name the same way).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attention_core.core.config import ModelConfig
from attention_core.core.family import Trace
from attention_core.core.functional import softmax
from attention_core.core.words import word_pattern, word_spans
from attention_core.methods.geometry import cosine, word_vectors

F64 = NDArray[np.float64]

FLUFFY = "the fluffy blue creature roamed the verdant forest"
ADJECTIVES = (("creature", "fluffy"), ("creature", "blue"), ("forest", "verdant"))  # (query, key)
LOOK_BACK = ("roamed", "creature")  # a verb and the noun just before it: no adjective at all
JANE = "Jane visits Africa"
JANE_NOTE = (("jane", "visits", 0.94), ("visits", "africa", 0.86), ("africa", "visits", 0.76))
MONSTER_CONTEXT = (
    "The green, one-eyed creature is the star of the Disney Pixar movie. He's short, has small "
    "horns and a non-confrontational figure. He's not a very menacing monster."
)
MONSTER_ALONE = "He's not a very menacing monster."  # the notes' last sentence, without the rest
MONSTER_PROBES = ("Mike Wazowski", "cyclops", "cartoon", "horror")
LONGER = 2.0  # how much longer the key is made in the length what-if


def word_tables(trace: Trace) -> tuple[tuple[str, ...], F64]:
    """The trace's words (as written) and every head's word-level pattern, [l, h, w, w]: a
    word's row is the mean of its pieces' rows, its column the sum of its pieces' columns."""
    spans = word_spans(trace.tokens)
    words = tuple(word for word, _ in spans)
    tables = np.stack(
        [
            [word_pattern(p_qk, spans) for p_qk in trace.pattern_lhqk[layer]]
            for layer in range(trace.config.n_layers)
        ]
    )
    return words, tables


def word_index(words: tuple[str, ...], word: str) -> int:
    """The position of ``word``'s first occurrence, ignoring case; ValueError naming the words
    when absent."""
    lower = [w.lower() for w in words]
    if word.lower() not in lower:
        raise ValueError(f"{word!r} is not one of the words {list(words)}")
    return lower.index(word.lower())


@dataclass(frozen=True)
class PairHead:
    """The head a rule picked for some (query word, key word) pairs, and its weights on them."""

    layer: int
    head: int
    pairs: tuple[tuple[str, str], ...]  # (query, key) words
    weights: tuple[float, ...]  # the head's weight from each query to its key
    table_ww: F64  # the head's whole word table, rows = queries


def pair_weights(words: tuple[str, ...], tables: F64, pairs: tuple[tuple[str, str], ...]) -> F64:
    """Every head's weight on each pair, [l, h, pairs]."""
    index = [(word_index(words, q), word_index(words, k)) for q, k in pairs]
    return np.stack([tables[:, :, q, k] for q, k in index], axis=-1)


def strongest_head(
    words: tuple[str, ...], tables: F64, pairs: tuple[tuple[str, str], ...]
) -> PairHead:
    """Rule: the head whose weakest pair is strongest (largest smallest weight over the pairs),
    so a head that serves one pair and ignores another is not picked."""
    weights = pair_weights(words, tables, pairs)
    layer, head = np.unravel_index(np.argmax(weights.min(axis=-1)), weights.shape[:2])
    return _pick(int(layer), int(head), pairs, weights, tables)


def closest_head(
    words: tuple[str, ...], tables: F64, note: tuple[tuple[str, str, float], ...]
) -> PairHead:
    """Rule: the head closest to the notes' numbers (smallest total difference over the pairs)."""
    pairs = tuple((q, k) for q, k, _ in note)
    weights = pair_weights(words, tables, pairs)
    distance = np.abs(weights - np.array([w for _, _, w in note])).sum(axis=-1)
    layer, head = np.unravel_index(np.argmin(distance), distance.shape)
    return _pick(int(layer), int(head), pairs, weights, tables)


def _pick(layer: int, head: int, pairs: Any, weights: F64, tables: F64) -> PairHead:
    values = tuple(float(w) for w in weights[layer, head])
    return PairHead(layer, head, tuple(pairs), values, tables[layer, head])


@dataclass(frozen=True)
class Adjectives:
    """The fluffy sentence measured: the head picked by the rule, how much of the weight an even
    spread would give, what the same head gives a verb's row at its noun, and the head whose
    weaker weight on the two adjectives right before their nouns ("blue", "verdant") is
    largest."""

    words: tuple[str, ...]
    best: PairHead  # strongest_head over ADJECTIVES
    even: tuple[float, ...]  # 1 / (words the query may see), per pair
    look_back: float  # the best head's weight from LOOK_BACK's verb to its noun
    next_to: PairHead  # strongest_head over the two adjectives right before their nouns


def adjectives(trace: Trace) -> Adjectives:
    """The notes' adjective claim on ``trace`` (a pass over ``FLUFFY``)."""
    words, tables = word_tables(trace)
    best = strongest_head(words, tables, ADJECTIVES)
    causal = bool(trace.config.causal)
    even = tuple(1.0 / (word_index(words, q) + 1 if causal else len(words)) for q, _ in ADJECTIVES)
    verb, noun = (word_index(words, w) for w in LOOK_BACK)
    next_to = strongest_head(words, tables, ADJECTIVES[1:])
    return Adjectives(words, best, even, float(best.table_ww[verb, noun]), next_to)


@dataclass(frozen=True)
class SoftSelect:
    """One query's row of one head, step by step, over the keys it may see (a decoder's query
    sees only itself and the tokens before it)."""

    layer: int
    head: int
    query: int  # the query token's position
    keys: tuple[str, ...]  # the tokens it may see, in order
    dot_k: F64  # q · k
    scaled_k: F64  # q · k / √d_k
    weight_k: F64  # softmax of the scaled row
    value_ke: F64  # each key's value vector
    z_e: F64  # Σ weight · value: what the head hands on for this query
    cos_k: F64  # cosine similarity of q and each k
    q_e: F64  # the query
    k_ke: F64  # the keys

    @property
    def q_norm(self) -> float:
        return float(np.linalg.norm(self.q_e))

    @property
    def k_norm_k(self) -> F64:
        return np.linalg.norm(self.k_ke, axis=-1)


def soft_select(trace: Trace, layer: int, head: int, query: int) -> SoftSelect:
    """The soft SELECT of ``query`` in ``layer``/``head``, from the trace's own q, k and v."""
    n = trace.n_tokens
    if not 0 <= query < n:
        raise ValueError(f"query {query} is outside 0..{n - 1}")
    seen = query + 1 if trace.config.causal else n
    q_e = np.asarray(trace.q_lhqe[layer, head][query], np.float64)
    k_ke = np.asarray(trace.k_lhke[layer, head][:seen], np.float64)
    v_ke = np.asarray(trace.v_lhke[layer, head][:seen], np.float64)
    dot = k_ke @ q_e  # [k,e] @ [e] -> [k]
    scaled = dot / np.sqrt(trace.config.d_head)
    weight = np.asarray(softmax(scaled), np.float64)
    return SoftSelect(
        layer,
        head,
        query,
        tuple(trace.tokens.tokens[:seen]),
        dot,
        scaled,
        weight,
        v_ke,
        weight @ v_ke,  # [k] @ [k,e] -> [e]
        cosine(q_e[None], k_ke),
        q_e,
        k_ke,
    )


@dataclass(frozen=True)
class Jane:
    """The Jane sentence: the head closest to the notes' table, and the soft SELECT of the
    query whose note pair that head serves best."""

    words: tuple[str, ...]
    best: PairHead  # closest_head over JANE_NOTE
    select: SoftSelect
    pair: int  # the index in JANE_NOTE of the pair the SELECT follows


def jane(trace: Trace) -> Jane:
    """The notes' "Jane visits Africa" table on ``trace`` (a pass over ``JANE``)."""
    words, tables = word_tables(trace)
    best = closest_head(words, tables, JANE_NOTE)
    pair = int(np.argmax(best.weights))
    span = word_spans(trace.tokens)[word_index(words, JANE_NOTE[pair][0])][1]
    select = soft_select(trace, best.layer, best.head, span[-1])
    return Jane(words, best, select, pair)


@dataclass(frozen=True)
class LengthEffect:
    """A query and a key, then the same key made ``factor`` times longer."""

    factor: float
    dot: float
    dot_longer: float
    cos: float
    cos_longer: float


def length_effect(
    q_e: NDArray[np.floating], k_e: NDArray[np.floating], factor: float = LONGER
) -> LengthEffect:
    """What lengthening the key does to the dot product (multiplied) and the cosine (unchanged)."""
    q, k = np.asarray(q_e, np.float64), np.asarray(k_e, np.float64)
    longer = factor * k
    return LengthEffect(
        factor, float(q @ k), float(q @ longer), float(cosine(q, k)), float(cosine(q, longer))
    )


@dataclass(frozen=True)
class MonsterShift:
    """The last "monster" of the notes' passage against the same sentence without the passage
    before it, each compared with probe words (all at the model's last hidden state)."""

    probes: tuple[str, ...]
    without_p: F64  # cosine with each probe, the last sentence alone
    with_p: F64  # cosine with each probe, in the whole passage
    moved: float  # cosine between the two "monster" vectors (1 = not moved at all)

    @property
    def change_p(self) -> F64:
        return self.with_p - self.without_p


def last_word_vector(trace: Trace, word: str) -> F64:
    """``word``'s last occurrence, the mean of its pieces, at the last hidden state, [d]."""
    hits = [span for text, span in word_spans(trace.tokens) if text.lower() == word]
    if not hits:
        raise ValueError(f"{word!r} is not a word of {trace.tokens.text!r}")
    return word_vectors(trace.hidden_ltd, hits[-1])[-1]


def monster_shift(
    with_trace: Trace,
    without_trace: Trace,
    probes: tuple[str, ...],
    probes_lpd: NDArray[np.floating],
) -> MonsterShift:
    """How the passage moves "monster" relative to ``probes`` (their vectors [l, p, d], e.g.
    from ``embed_words``; the last state is used)."""
    with_d, without_d = (last_word_vector(t, "monster") for t in (with_trace, without_trace))
    probes_pd = np.asarray(probes_lpd, np.float64)[-1]
    return MonsterShift(
        tuple(probes),
        cosine(without_d[None], probes_pd),
        cosine(with_d[None], probes_pd),
        float(cosine(with_d, without_d)),
    )


@dataclass(frozen=True)
class ContextWindow:
    """The size of one head's pattern: for this text, and at the longest input of the model."""

    n_tokens: int
    longest: int  # the model's position table: the longest input it was built for
    runs: int  # the longest input this app runs it on
    heads: int  # patterns per pass: layers × heads

    @property
    def weights(self) -> int:
        return self.n_tokens**2

    @property
    def weights_longest(self) -> int:
        return self.longest**2


def context_window(config: ModelConfig, n_tokens: int) -> ContextWindow:
    """``n_tokens`` × ``n_tokens`` now; ``n_positions`` squared at the model's limit."""
    return ContextWindow(
        n_tokens, config.n_positions, config.max_tokens, config.n_layers * config.n_heads
    )
