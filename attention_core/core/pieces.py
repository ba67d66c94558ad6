"""Byte-level BPE pieces (GPT-2's alphabet, which SmolLM2's and Whisper's tokenizers share): a
text's first pieces as ``Tokens``, and a piece shown as the text it stands for: "Ġ" (a byte-level
space) becomes "▁", a newline "⏎", and bytes that are only part of a character are written as
hex."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from attention_core.core.tokens import Tokens

_PARTIAL = re.compile("[\udc80-\udcff]+")  # bytes that surrogateescape could not decode
_SHOWN = str.maketrans({" ": "▁", "\n": "⏎", "\t": "⇥", "\r": "↵"})


@cache
def byte_alphabet() -> dict[int, str]:
    """GPT-2's byte -> printable character table (bytes_to_unicode)."""
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    chars, extra = dict(zip(printable, printable, strict=True)), 0
    for b in range(256):
        if b not in chars:
            chars[b], extra = 256 + extra, extra + 1
    return {b: chr(c) for b, c in chars.items()}


@cache
def _char_bytes() -> dict[str, int]:
    return {c: b for b, c in byte_alphabet().items()}


def show_piece(piece: str) -> str:
    """The text a byte-level piece stands for, spaces as "▁", newlines as "⏎"; bytes that are
    only part of a character (an emoji cut in two pieces) as hex, "▁<f0 9f 98>"."""
    table = _char_bytes()
    if not set(piece) <= table.keys():  # a special token such as <|im_end|>
        return piece
    text = bytes(table[c] for c in piece).decode("utf-8", "surrogateescape").translate(_SHOWN)
    return _PARTIAL.sub(lambda m: f"<{m[0].encode('utf-8', 'surrogateescape').hex(' ')}>", text)


def first_pieces(
    tokenizer: Any,
    text: str,
    limit: int,
    n_positions: int,
    show: Callable[[str], str] = str,
    add_special_tokens: bool = True,
) -> Tokens:
    """``text`` through a byte-level ``tokenizers.Tokenizer``, its first ``limit`` pieces kept
    (``n_cut`` counts the rest), each shown by ``show``; ``special_t`` is True only where the
    text itself spells one of the tokenizer's special tokens."""
    if not 1 <= limit <= n_positions:
        raise ValueError(f"max_tokens must be in [1, {n_positions}], got {limit}")
    enc = tokenizer.encode(text, add_special_tokens=add_special_tokens)
    n = min(len(enc.ids), limit)
    if n == 0:
        raise ValueError("text is empty: type a sentence")
    special = [i for i, t in tokenizer.get_added_tokens_decoder().items() if t.special]
    return Tokens(
        text=text,
        tokens=tuple(show(p) for p in enc.tokens[:n]),
        input_ids_t=np.asarray(enc.ids[:n], dtype=np.int64),
        offsets_t2=np.asarray(enc.offsets[:n], dtype=np.int64).reshape(-1, 2),
        special_t=np.isin(enc.ids[:n], special),
        n_cut=len(enc.ids) - n,
    )
