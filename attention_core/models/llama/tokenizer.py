"""The byte-level BPE tokenizer a Llama GGUF describes, and Llama text -> ``Tokens``.

Built as transformers builds it from the same file (``GPT2Tokenizer`` from the vocabulary and
merges, ByteLevel pre-tokenizer without a prefix space, the control tokens added as special,
no BOS), so the ids are the ones ``AutoTokenizer.from_pretrained(folder, gguf_file=...)`` gives.
Pieces are shown as the text they stand for: "Ġ" (a byte-level space) becomes "▁", a newline "⏎".
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from attention_core.core.tokens import Tokens

if TYPE_CHECKING:
    from attention_core.models.llama.model import LlamaModel

_CONTROL = 3  # llama.cpp's token type for control tokens such as <|im_end|>
_PARTIAL = re.compile("[\udc80-\udcff]+")  # bytes that surrogateescape could not decode
_SHOWN = str.maketrans({" ": "▁", "\n": "⏎", "\t": "⇥", "\r": "↵"})


@cache
def _byte_alphabet() -> dict[int, str]:
    """GPT-2's byte -> printable character table (bytes_to_unicode)."""
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    chars, extra = dict(zip(printable, printable, strict=True)), 0
    for b in range(256):
        if b not in chars:
            chars[b], extra = 256 + extra, extra + 1
    return {b: chr(c) for b, c in chars.items()}


@cache
def _char_bytes() -> dict[str, int]:
    return {c: b for b, c in _byte_alphabet().items()}


def build_tokenizer(metadata: dict[str, Any]) -> Any:
    """A ``tokenizers.Tokenizer`` from a GGUF's ``tokenizer.ggml.*`` metadata."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    spelled, alphabet = _byte_alphabet(), set(_byte_alphabet().values())
    tokens = [str(t) for t in metadata["tokenizer.ggml.tokens"]]
    vocab = {
        t if set(t) <= alphabet else "".join(spelled[b] for b in t.encode("utf-8")): i
        for i, t in enumerate(tokens)
    }
    merges = [tuple(m.split(" ", 1)) for m in metadata["tokenizer.ggml.merges"]]
    tok = Tokenizer(models.BPE(vocab, merges, fuse_unk=False))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    types = metadata.get("tokenizer.ggml.token_type", ())
    control = [
        AddedToken(t, normalized=False, special=True)
        for t, kind in zip(tokens, types, strict=False)
        if kind == _CONTROL and set(t) <= alphabet
    ]
    tok.add_special_tokens(control)
    return tok


def show_piece(piece: str) -> str:
    """The text a byte-level piece stands for, spaces as "▁", newlines as "⏎"; bytes that are
    only part of a character (an emoji cut in two pieces) as hex, "▁<f0 9f 98>"."""
    table = _char_bytes()
    if not set(piece) <= table.keys():  # a special token such as <|im_end|>
        return piece
    text = bytes(table[c] for c in piece).decode("utf-8", "surrogateescape").translate(_SHOWN)
    return _PARTIAL.sub(lambda m: f"<{m[0].encode('utf-8', 'surrogateescape').hex(' ')}>", text)


def _special_ids(tokenizer: Any) -> list[int]:
    return [i for i, t in tokenizer.get_added_tokens_decoder().items() if t.special]


def tokenize_llama(model: LlamaModel, text: str, max_tokens: int | None = None) -> Tokens:
    """Tokenize ``text`` as the model does (no BOS); keep the first ``max_tokens`` (default:
    the config's ``max_tokens``), ``n_cut`` counting the pieces dropped."""
    limit = model.config.max_tokens if max_tokens is None else max_tokens
    if not 1 <= limit <= model.config.n_positions:
        raise ValueError(f"max_tokens must be in [1, {model.config.n_positions}], got {limit}")
    enc = model.tokenizer.encode(text)
    n = min(len(enc.ids), limit)
    if n == 0:
        raise ValueError("text is empty: type a sentence")
    return Tokens(
        text=text,
        tokens=tuple(show_piece(p) for p in enc.tokens[:n]),
        input_ids_t=np.asarray(enc.ids[:n], dtype=np.int64),
        offsets_t2=np.asarray(enc.offsets[:n], dtype=np.int64).reshape(-1, 2),
        special_t=np.isin(enc.ids[:n], _special_ids(model.tokenizer)),
        n_cut=len(enc.ids) - n,
    )
