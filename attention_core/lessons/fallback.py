"""Token embeddings that need no model: hashed random vectors, for when the model is missing.

Pages that do not need the pretrained model (the build-your-own head) keep working without it:
the text is split on whitespace and punctuation, and each piece becomes a unit-length Gaussian
vector seeded by a hash of the piece. hashlib (not Python's salted ``hash``) keeps the vectors
the same across runs and machines. The vectors carry no meaning: equal pieces get equal vectors,
everything else is unrelated.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np
from numpy.typing import NDArray

MAX_PIECES = 512  # as many as the model reads
_PIECE = re.compile(r"\w+|[^\w\s]")  # a run of word characters, or one punctuation mark


def split_pieces(text: str) -> list[str]:
    """Every word and punctuation piece of ``text``, in order (not cut to MAX_PIECES)."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    return _PIECE.findall(text)


def piece_vector(piece: str, d_model: int, seed: int = 0) -> NDArray[np.float32]:
    """The unit-length Gaussian vector of one piece. Case-folded, as the uncased model is."""
    digest = hashlib.blake2b(f"{seed}\x00{piece.casefold()}".encode(), digest_size=8).digest()
    vec = np.random.default_rng(int.from_bytes(digest, "little")).standard_normal(d_model)
    return (vec / np.linalg.norm(vec)).astype(np.float32)


def fallback_embeddings(
    text: str, d_model: int = 384, seed: int = 0
) -> tuple[tuple[str, ...], NDArray[np.float32]]:
    """The first MAX_PIECES pieces of ``text`` and their hashed embeddings [t, d_model]."""
    if d_model < 1:
        raise ValueError(f"d_model must be >= 1, got {d_model}")
    tokens = tuple(split_pieces(text)[:MAX_PIECES])
    if not tokens:
        raise ValueError("text has no words or punctuation to embed")
    return tokens, np.stack([piece_vector(p, d_model, seed) for p in tokens])
