"""Text -> the model's own tokens (WordPiece, or a decoder's byte-level BPE), each mapped back to
its character span."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from attention_core.models.bert.model import Model

if TYPE_CHECKING:
    from attention_core.models.llama.model import LlamaModel


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
    tokens: tuple[str, ...]  # WordPiece pieces, e.g. ("[CLS]", "dirty", "##est", "[SEP]")
    input_ids_t: NDArray[np.int64]  # vocabulary ids
    offsets_t2: NDArray[np.int64]  # [start, end) character span in text; (0, 0) for specials
    special_t: NDArray[np.bool_]  # True for [CLS] / [SEP]
    n_cut: int  # how many tokens beyond max_tokens were dropped (0 when nothing was cut)

    def __len__(self) -> int:
        return len(self.tokens)


def tokenize(model: Model | LlamaModel, text: str, max_tokens: int | None = None) -> Tokens:
    """Tokenize ``text``; keep at most ``max_tokens`` (default: the model's positions).

    Longer input is cut at the end and the final [SEP] kept, as the model's tokenizer does;
    ``n_cut`` says how many pieces were dropped. A decoder (SmolLM2) keeps its first
    ``max_tokens`` pieces (default ``config.max_tokens``); see ``models.llama_tokenizer``.
    """
    check_text(text, max_chars=None)  # a string of valid Unicode, not blank
    if not isinstance(model, Model):  # another family's model tokenizes its own way
        return model.tokenize(text, max_tokens)
    limit = model.config.n_positions if max_tokens is None else max_tokens
    if not 3 <= limit <= model.config.n_positions:
        raise ValueError(f"max_tokens must be in [3, {model.config.n_positions}], got {limit}")
    enc = model.tokenizer.encode(text)
    # Each of enc's attributes builds a new Python list when read: read each once (indexing
    # enc.ids[i] in a loop rebuilt the list per token, 36 ms at 512 tokens for a 0.8 ms encode).
    pieces, ids, offsets, special = enc.tokens, enc.ids, enc.offsets, enc.special_tokens_mask
    whole = Tokens(
        text=text,
        tokens=tuple(pieces),
        input_ids_t=np.asarray(ids, dtype=np.int64),
        offsets_t2=np.asarray(offsets, dtype=np.int64).reshape(-1, 2),
        special_t=np.asarray(special, dtype=bool),
        n_cut=0,
    )
    return window_tokens(whole, limit) if len(ids) > limit else whole


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
