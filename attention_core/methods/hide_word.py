"""What did that word do? The sentence run twice, once as it is and once with one word hidden from
every other token, and how one token's vector differs between the two passes.

Hiding a word masks its keys in every layer (``WhatIf.hidden``), as transformers does for tokens
whose ``attention_mask`` is 0: no token can read it, while every token keeps its position. So the
difference between the passes is exactly what the word passed on through attention, layer by
layer. At the embedding (hidden state 0) nothing has been read yet, so the two vectors are equal
there; the word's effect appears from block 1 on. The sentence embedding of the second pass leaves
the hidden word out of its mean, as sentence-transformers does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attention_core.core.config import ModelConfig
from attention_core.core.display import state_name
from attention_core.core.family import LoadedModel, Trace, pools_sentence
from attention_core.core.tokens import Tokens
from attention_core.core.whatif import WhatIf
from attention_core.methods.geometry import cosine, split_words, word_vectors
from attention_core.methods.telling import FUNCTION_WORDS
from attention_core.methods.values import default_token
from attention_core.models import run_model, trace_sentence

F64 = NDArray[np.float64]


@dataclass(frozen=True)
class WordEffect:
    """How one token's vector changes when a word of its sentence is hidden.

    Arrays ending in ``_l`` have one entry per hidden state: 0 is the embedding, i the output of
    block i. Probe arrays are [hidden state, probe], in the order the probes were given.
    """

    hidden_word: str  # the hidden word as written in the sentence
    watched_word: str  # the token (or word) whose vector is compared, as written
    hidden: tuple[int, ...]  # token positions of the hidden word's pieces
    watched: tuple[int, ...]  # token positions of the watched pieces (their vectors averaged)
    cosine_l: F64  # cosine of the watched vector with vs without the word: 1 = unchanged
    distance_l: F64  # Euclidean distance between the two vectors
    length_l: F64  # length of the watched vector with the word, to read the distance against
    sentence_cosine: float | None  # the sentence embedding's cosine with vs without the word
    # (None for a model that makes no sentence embedding: a decoder)
    probe_cosine_with_lp: F64  # cosine of the watched vector to each probe, word visible
    probe_cosine_without_lp: F64  # the same with the word hidden
    config: ModelConfig | None = None  # the model's, to name its hidden states (summary)

    @property
    def probe_pull_lp(self) -> F64:
        """How far the word pulls the watched vector towards each probe (cosine with - without)."""
        return self.probe_cosine_with_lp - self.probe_cosine_without_lp

    @property
    def most_changed(self) -> int:
        """The hidden state (0 embedding, i after layer i − 1) where the watched vector changes
        most."""
        return int(np.argmin(self.cosine_l))

    @property
    def sentence_distance(self) -> float | None:
        """Distance between the two sentence embeddings, both of length 1: √(2 − 2·cos)."""
        if self.sentence_cosine is None:
            return None
        return float(np.sqrt(max(2.0 - 2.0 * self.sentence_cosine, 0.0)))

    def summary(self) -> str:
        """One plain sentence with the largest change, e.g. for a caption."""
        state = self.most_changed
        where = ("in the " if state == 0 else "") + state_name(state, self.config)
        return (
            f"Hiding “{self.hidden_word}” changes “{self.watched_word}” most {where}: cosine "
            f"{self.cosine_l[state]:.2f} between its vectors with and without the word "
            f"(1 = unchanged), distance {self.distance_l[state]:.2f}."
        )


def word_pieces(tokens: Tokens, word: str) -> tuple[int, ...]:
    """The token positions of ``word``'s first occurrence (case ignored), all its pieces."""
    hits = [pos for w, pos in split_words(tokens.tokens) if w == word.lower()]
    if not hits:
        words = [w for w, _ in split_words(tokens.tokens)]
        raise ValueError(f"{word!r} is not a word of the sentence; its words are {words}")
    return hits[0]


def _as_positions(name: str, positions: int | Sequence[int], n_tokens: int) -> tuple[int, ...]:
    out = (positions,) if isinstance(positions, int | np.integer) else tuple(positions)
    if not out or not all(isinstance(p, int | np.integer) and 0 <= p < n_tokens for p in out):
        raise ValueError(f"{name} must be token positions in [0, {n_tokens}), got {positions!r}")
    return tuple(sorted({int(p) for p in out}))


def _written(tokens: Tokens, positions: tuple[int, ...]) -> str:
    """The characters of the text the pieces cover ([CLS]/[SEP] by their own names)."""
    if tokens.special_t[list(positions)].any():
        return " ".join(tokens.tokens[p] for p in positions)
    start, end = tokens.offsets_t2[positions[0], 0], tokens.offsets_t2[positions[-1], 1]
    return tokens.text[start:end]


def _probe_cosines(vectors_ld: F64, probes_lpd: NDArray[np.floating] | None, n_states: int) -> F64:
    if probes_lpd is None:
        return np.zeros((n_states, 0))
    probes = np.asarray(probes_lpd, np.float64)
    if probes.ndim != 3 or probes.shape[0] != n_states or probes.shape[2] != vectors_ld.shape[1]:
        raise ValueError(
            f"probes_lpd must have shape ({n_states}, p, {vectors_ld.shape[1]}), got {probes.shape}"
        )
    return cosine(vectors_ld[:, None], probes)  # [l,1,d] vs [l,p,d] -> [l,p]


def hide_word(
    model: LoadedModel,
    text_or_tokens: str | Tokens,
    word_positions: Sequence[int],
    token: int | Sequence[int],
    probes_lpd: NDArray[np.floating] | None = None,
) -> WordEffect:
    """Compare ``token``'s vectors with the word at ``word_positions`` visible and hidden.

    ``token`` is one position or the positions of one word's pieces (their vectors averaged);
    ``probes_lpd`` are probe vectors per hidden state, e.g. ``embed_words(model, probes)``.
    """
    run = _runner(model, text_or_tokens)
    with_word = run(WhatIf())
    hidden, _ = _checked(with_word, word_positions, token)
    return compare_passes(with_word, run(WhatIf(hidden=hidden)), token, probes_lpd)


def _checked(
    with_word: Trace, word_positions: Sequence[int], token: int | Sequence[int]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    n = with_word.n_tokens
    hidden = _as_positions("word_positions", word_positions, n)
    watched = _as_positions("token", token, n)
    if set(hidden) & set(watched):
        raise ValueError(f"token {watched} is part of the hidden word {hidden}: watch another one")
    return hidden, watched


def compare_passes(
    with_word: Trace,
    without_word: Trace,
    token: int | Sequence[int],
    probes_lpd: NDArray[np.floating] | None = None,
) -> WordEffect:
    """``hide_word`` for two passes already run (e.g. taken from a cache): the sentence as it
    is, and the same input with ``without_word.whatif.hidden`` hidden."""
    hidden, watched = _checked(with_word, without_word.whatif.hidden, token)
    if without_word.tokens.input_ids_t.tolist() != with_word.tokens.input_ids_t.tolist():
        raise ValueError("the two passes must read the same tokens")
    a_ld = word_vectors(with_word.hidden_ltd, watched)
    b_ld = word_vectors(without_word.hidden_ltd, watched)
    return WordEffect(
        hidden_word=_written(with_word.tokens, hidden),
        watched_word=_written(with_word.tokens, watched),
        hidden=hidden,
        watched=watched,
        cosine_l=cosine(a_ld, b_ld),
        distance_l=np.linalg.norm(a_ld - b_ld, axis=-1),
        length_l=np.linalg.norm(a_ld, axis=-1),
        sentence_cosine=_sentence_cosine(with_word, without_word),
        probe_cosine_with_lp=_probe_cosines(a_ld, probes_lpd, len(a_ld)),
        probe_cosine_without_lp=_probe_cosines(b_ld, probes_lpd, len(b_ld)),
        config=with_word.config,
    )


def _sentence_cosine(with_word: Trace, without_word: Trace) -> float | None:
    if not (pools_sentence(with_word) and pools_sentence(without_word)):
        return None
    return float(cosine(with_word.sentence_embedding_d, without_word.sentence_embedding_d))


def _runner(model: LoadedModel, text_or_tokens: str | Tokens) -> Callable[[WhatIf], Trace]:
    """One pass under given switches: a text goes through trace_sentence (its sentence embedding
    follows sentence-transformers' window), ready tokens straight through run_model."""
    if isinstance(text_or_tokens, Tokens):
        return lambda whatif: run_model(model, text_or_tokens, whatif)
    return lambda whatif: trace_sentence(model, text_or_tokens, whatif)


def words_of(tokens: Tokens) -> dict[str, tuple[int, ...]]:
    """Each word of the sentence once (its first occurrence, as ``word_pieces`` finds it)."""
    found: dict[str, tuple[int, ...]] = {}
    for word, positions in split_words(tokens.tokens):
        found.setdefault(word, positions)
    return found


def default_choice(
    tokens: Tokens, curated: tuple[int, int] | None = None
) -> tuple[str, int] | None:
    """(word to hide, token to watch) to open on. ``curated`` (token, key): a preset's query
    token and the token its claim names; the word holding the key is hidden and the token watched
    (for the river bank: hide "river", watch "bank"). Otherwise the last real word is watched and
    the first content word hidden. None when the sentence has no word besides the watched one."""
    words = words_of(tokens)
    if curated and max(curated) < len(tokens):
        token, key = curated
        owner = [w for w, pos in words.items() if key in pos and token not in pos]
        if owner:
            return owner[0], token
    token = default_token(tokens.tokens, tokens.special_t)
    others = [w for w, pos in words.items() if token not in pos]
    content = [w for w in others if w not in FUNCTION_WORDS and any(c.isalnum() for c in w)]
    return ((content or others)[0], token) if others else None


def default_base(options: Sequence[str]) -> str:
    """The word to hide for comparison, the one that shows what "no particular effect" looks
    like: the last function word among ``options``, else the last option."""
    little = [w for w in options if w in FUNCTION_WORDS]
    return (little or list(options))[-1]
