"""Geometry of the hidden states: PCA by SVD, cosine similarity, words made of word pieces,
probe words embedded by the model on their own, and a token's cosines with those probes.

Pure NumPy. Vectors are the rows of ``hidden_ltd``, indexed by hidden state: state 0 is the
LayerNormed embedding, state l the output of layer l − 1 (layers count from 0, like the app's
Layer slider). A word is the mean of its pieces' vectors, so "muddy" ("mud", "##dy") and "bank"
are treated alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attention_core.core.family import LoadedModel
from attention_core.models import trace_sentence

F64 = NDArray[np.float64]
MAX_PROBES = 12  # probe words kept from one input
MAX_PROBE_CHARS = 40  # longest probe word accepted


@dataclass(frozen=True)
class Pca:
    """A principal-component basis fitted on the rows of one matrix (``c`` components)."""

    mean_d: F64  # the fitted rows' mean, subtracted before projecting
    components_cd: F64  # orthonormal directions, largest variance first
    explained_variance_c: F64  # variance of the fitted rows along each direction
    explained_ratio_c: F64  # that variance as a share of the total variance

    def transform(self, x_nd: NDArray[np.floating]) -> F64:
        """Coordinates of the rows of ``x_nd`` (any leading shape, last axis d) in the basis."""
        return (np.asarray(x_nd, np.float64) - self.mean_d) @ self.components_cd.T  # [..,d]@[d,c]


def fit_pca(x_nd: NDArray[np.floating], n_components: int = 2) -> Pca:
    """PCA of the rows of ``x_nd`` by SVD of the centred matrix (sklearn's convention, with the
    sign of each component fixed so its largest loading is positive)."""
    x = np.asarray(x_nd, np.float64)
    if x.ndim != 2 or not 1 <= n_components <= min(x.shape):
        raise ValueError(
            f"need a 2-D matrix with at least {n_components} rows and columns, got shape {x.shape}"
        )
    if not np.isfinite(x).all():
        raise ValueError("cannot fit PCA: the matrix holds NaN or infinity")
    mean_d = x.mean(axis=0)
    _, s, vt = np.linalg.svd(x - mean_d, full_matrices=False)
    components = vt[:n_components]
    signs = np.sign(components[np.arange(n_components), np.abs(components).argmax(axis=1)])
    components = components * np.where(signs == 0, 1.0, signs)[:, None]
    variance = s**2 / max(len(x) - 1, 1)
    total = variance.sum()
    ratio = variance[:n_components] / total if total > 0 else np.zeros(n_components)
    return Pca(mean_d, components, variance[:n_components], ratio)


def cosine(a_nd: NDArray[np.floating], b_nd: NDArray[np.floating]) -> F64:
    """Cosine similarity along the last axis, broadcasting the rest; 0 where a vector is zero."""
    a, b = np.asarray(a_nd, np.float64), np.asarray(b_nd, np.float64)
    norms = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    dots = (a * b).sum(axis=-1)
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


SPECIAL_PIECES = ("[CLS]", "[SEP]", "[PAD]")
SPACE = "▁"  # how a byte-level piece shows the space it starts with (attention_core.core.tokens)


def split_words(tokens: Sequence[str]) -> list[tuple[str, tuple[int, ...]]]:
    """Whole words with the positions of their pieces. WordPiece (MiniLM) marks a continuation:
    a piece plus the "##" pieces after it; [CLS], [SEP] and [PAD] are not words. Byte-level BPE
    (SmolLM2) marks a word's start with the space it carries ("▁quantum"): a piece without one
    continues the word before it ("dir" + "ty"), unless either is punctuation. (A character
    whose bytes fall into two pieces, shown as "<c3>" and "<a7>a", stays two words.)"""
    wordpiece = any(tok in SPECIAL_PIECES or tok.startswith("##") for tok in tokens)
    out: list[tuple[str, list[int]]] = []
    for i, tok in enumerate(tokens):
        if tok in SPECIAL_PIECES:
            continue
        if wordpiece:
            joins, text = tok.startswith("##") and bool(out) and out[-1][1][-1] == i - 1, tok[2:]
        else:
            text = tok.removeprefix(SPACE)
            joins = bool(out) and text == tok and _wordlike(tok) and _wordlike(out[-1][0])
        if joins:
            out[-1] = (out[-1][0] + text, [*out[-1][1], i])
        else:
            out.append((tok if wordpiece else text, [i]))
    return [(word, tuple(pos)) for word, pos in out if word.strip()]


def _wordlike(piece: str) -> bool:
    return bool(piece) and (piece[0].isalnum() or piece[0] in "'’-") and piece[-1].isalnum()


def shared_words(tokens_a: Sequence[str], tokens_b: Sequence[str]) -> list[str]:
    """Words present in both token lists, once each, in their order in ``tokens_a``."""
    in_b = {word for word, _ in split_words(tokens_b)}
    return list(dict.fromkeys(word for word, _ in split_words(tokens_a) if word in in_b))


def word_positions(
    tokens_a: Sequence[str], tokens_b: Sequence[str], word: str
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The piece positions of ``word``'s first occurrence in each token list."""
    found = []
    for name, tokens in (("first", tokens_a), ("second", tokens_b)):
        hits = [pos for w, pos in split_words(tokens) if w == word]
        if not hits:
            raise ValueError(f"{word!r} is not a word of the {name} token list")
        found.append(hits[0])
    return found[0], found[1]


def word_vectors(
    hidden_ltd: NDArray[np.floating], positions: Sequence[int] | NDArray[np.integer]
) -> F64:
    """One word's vector at every layer: the mean over its pieces, [l, t, d] -> [l, d]."""
    index = np.asarray(positions, dtype=np.int64).reshape(-1)
    if index.size == 0:
        raise ValueError("a word needs at least one piece position")
    return np.asarray(hidden_ltd, np.float64)[:, index].mean(axis=1)


def parse_probes(
    text: str, max_probes: int = MAX_PROBES, max_chars: int = MAX_PROBE_CHARS
) -> tuple[list[str], list[str]]:
    """Comma-separated probe words -> (the usable probes, what was dropped and why).

    Empty items, items longer than ``max_chars``, repeats (ignoring case) and everything past
    ``max_probes`` are dropped; one message per kind of problem, so any input gives at most four.
    """
    items = [item.strip() for item in text.split(",")]
    probes: list[str] = []
    too_long: list[str] = []
    repeats: list[str] = []
    n_over = 0
    for item in filter(None, items):
        if len(item) > max_chars:
            too_long.append(item)
        elif item.lower() in {p.lower() for p in probes}:
            repeats.append(item)
        elif len(probes) == max_probes:
            n_over += 1
        else:
            probes.append(item)
    problems = []
    n_empty = items.count("")
    if n_empty and text.strip():
        problems.append(f"Dropped {n_empty} empty item(s): put one word between each two commas.")
    if too_long:
        problems.append(
            f"Dropped {len(too_long)} item(s) longer than {max_chars} characters, "
            f"e.g. “{too_long[0][:20]}…”."
        )
    if repeats:
        problems.append(f"Dropped repeated probe(s): {', '.join(repeats[:5])}.")
    if n_over:
        problems.append(f"Only the first {max_probes} probe words are used; {n_over} more dropped.")
    return probes, problems


def embed_words(model: LoadedModel, probes: Sequence[str]) -> F64:
    """Each probe run through the model alone, as its own one-word sentence: the mean over its
    pieces ([CLS]/[SEP] left out) at every hidden state, [l, p, d] (l = n_layers + 1)."""
    out = []
    for probe in probes:
        trace = trace_sentence(model, probe)
        pieces = np.flatnonzero(~trace.tokens.special_t)
        if pieces.size == 0:
            raise ValueError(f"probe {probe!r} has no word pieces")
        out.append(word_vectors(trace.hidden_ltd, pieces))
    if not out:
        return np.zeros((model.config.n_layers + 1, 0, model.config.d_model))
    return np.stack(out, axis=1)  # p × [l,d] -> [l,p,d]


def fit_shift_plane(
    hidden_ltd: NDArray[np.floating], keep_t: NDArray[np.int64], probes_lpd: NDArray[np.floating]
) -> tuple[Pca, F64, F64]:
    """One 2-D PCA plane for a sentence: fitted once on the kept tokens' vectors at every hidden
    state together with the probes' vectors at every state, so the axes stay put from state to
    state.
    Returns the fit and the coordinates of the tokens [l, t, 2] and probes [l, p, 2]."""
    tokens_ltd = np.asarray(hidden_ltd, np.float64)[:, keep_t]
    d = tokens_ltd.shape[-1]
    probes = np.asarray(probes_lpd, np.float64).reshape(len(tokens_ltd), -1, d)
    pca = fit_pca(np.concatenate([tokens_ltd.reshape(-1, d), probes.reshape(-1, d)]))
    return pca, pca.transform(tokens_ltd), pca.transform(probes)


def closest_token(
    tokens: Sequence[str],
    vectors_td: NDArray[np.floating],
    probes_pd: NDArray[np.floating],
    probe_words: Sequence[str],
) -> int:
    """A token worth following by default: the word piece whose vector is, on average, most
    similar to the probes', leaving out [CLS]/[SEP], punctuation and the probe words themselves
    (falling back to the first token that is not [CLS]/[SEP], then to 0)."""
    skip = {w.lower() for w in probe_words}
    ordinary = [i for i, t in enumerate(tokens) if t not in ("[CLS]", "[SEP]", "[PAD]")]
    candidates = [i for i in ordinary if tokens[i] not in skip and any(map(str.isalnum, tokens[i]))]
    if not candidates or len(probes_pd) == 0:
        return (candidates or ordinary or [0])[0]
    mean_cos = cosine(np.asarray(vectors_td)[candidates][:, None], np.asarray(probes_pd)[None])
    return candidates[int(np.argmax(mean_cos.mean(axis=1)))]  # [c,1,d] vs [1,p,d] -> [c,p]


@dataclass(frozen=True)
class ProbeCosines:
    """A token's cosine with each probe word, both taken at the same hidden state, at every state.

    The probes are run through the model too, so their vectors move from state to state and every
    raw cosine tends to rise or fall together. ``relative_lp`` removes that shared drift: it says
    which probes the token is nearer, compared with the others.
    """

    raw_lp: F64  # cosine of the token with each probe, both at state l
    mean_l: F64  # the raw cosines' mean over the probes: the part every probe shares
    relative_lp: F64  # raw minus that mean; each row sums to 0

    def change(self, state: int) -> F64:
        """How far the token moved towards each probe, relative to the others, from the
        embedding (state 0) to ``state``: [p]."""
        return self.relative_lp[state] - self.relative_lp[0]


def relative_cosines(cos_lp: NDArray[np.floating]) -> F64:
    """Each cosine minus the mean over the probes (the last axis). Adding the same number to every
    probe's cosine at a state leaves the result unchanged; with one probe it is 0."""
    cos = np.asarray(cos_lp, np.float64)
    if cos.shape[-1] == 0:
        return cos.copy()
    return cos - cos.mean(axis=-1, keepdims=True)


def probe_cosines(token_ld: NDArray[np.floating], probes_lpd: NDArray[np.floating]) -> ProbeCosines:
    """Compare one token (its vector at every state, [l, d]) with the probes ([l, p, d], e.g. from
    ``embed_words``) state by state; with no probes every array has p = 0 and the mean is 0."""
    token, probes = np.asarray(token_ld, np.float64), np.asarray(probes_lpd, np.float64)
    if token.ndim != 2 or probes.ndim != 3 or probes.shape[::2] != token.shape:
        raise ValueError(
            f"token vectors {token.shape} must be [l, d] and probe vectors "
            f"{probes.shape} [l, p, d] with the same l and d"
        )
    raw = cosine(token[:, None], probes)  # [l,1,d] vs [l,p,d] -> [l,p]
    mean = raw.mean(axis=1) if raw.shape[1] else np.zeros(len(raw))
    return ProbeCosines(raw, mean, relative_cosines(raw))
