"""Tokens, whatever the family: a text's pieces, ids and character spans (``Tokens``), the checks
every way in makes on a visitor's text (``check_text``), and a long text cut to a window
(``window_tokens``). Each family tokenizes its own way (``attention_core.models.tokenize``)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

MAX_CHARS = 20_000  # the longest text the app, its route and the notebook widget accept
NOT_UNICODE = (
    "The text is not valid Unicode (it holds a lone surrogate or bytes that are not UTF-8); "
    "retype or paste it again."
)


def valid_unicode(text: str) -> bool:
    """False for a string that holds a lone surrogate (no UTF-8 can encode it)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_text(text: object, max_chars: int | None = MAX_CHARS) -> str:
    """``text`` when a visitor's text can be read: a string of valid Unicode (no lone surrogate,
    which a JSON body, a URL or a command line can carry and the tokenizers refuse with a
    TypeError), not blank, at most ``max_chars`` characters (None: any length); else ValueError
    with a plain reason. Every way in (routes, pages, widget, CLI) calls it before any work."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    if max_chars is not None and len(text) > max_chars:
        raise ValueError(f"text is {len(text):,} characters; the limit is {max_chars:,}")
    if not valid_unicode(text):
        raise ValueError(NOT_UNICODE)
    if not text.strip():
        raise ValueError("text is empty: type a sentence")
    return text


@dataclass(frozen=True)
class Tokens:
    """One tokenized sentence, [CLS] and [SEP] included."""

    text: str  # the input as given
    tokens: tuple[str, ...]  # the pieces as shown: a word goes on with "##" (WordPiece, e.g.
    # ("[CLS]", "dirty", "##est", "[SEP]")) or starts with "▁" (a byte-level space: "▁quantum")
    input_ids_t: NDArray[np.int64]  # vocabulary ids
    offsets_t2: NDArray[np.int64]  # [start, end) character span in text; (0, 0) for specials
    special_t: NDArray[np.bool_]  # True for [CLS] / [SEP]
    n_cut: int  # how many tokens beyond max_tokens were dropped (0 when nothing was cut)

    def __len__(self) -> int:
        return len(self.tokens)


def window_tokens(tokens: Tokens, limit: int) -> Tokens:
    """The first ``limit - 1`` pieces and the final one ([SEP]) of ``tokens``: how ``tokenize``
    cuts a text to ``limit``, and ``tokenize(model, tokens.text, limit)`` from a longer cut of
    the same text without encoding it again."""
    keep = [*range(limit - 1), len(tokens) - 1]
    return replace(
        tokens,
        tokens=tuple(tokens.tokens[i] for i in keep),
        input_ids_t=tokens.input_ids_t[keep],
        offsets_t2=tokens.offsets_t2[keep],
        special_t=tokens.special_t[keep],
        n_cut=tokens.n_cut + len(tokens) - limit,
    )
