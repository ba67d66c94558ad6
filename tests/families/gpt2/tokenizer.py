"""A tiny word-level tokenizer for the test family, built in code: one id per word or punctuation
mark, ``<unk>`` for the rest. A piece that follows a space shows it as "▁" (as the Llama family
shows byte-level BPE's "Ġ"), so the engine's ``split_words`` reads each piece as a word."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from attention_core.core.tokens import Tokens

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from tests.families.gpt2.model import GPT2Model

SPACE = "▁"
UNK = "<unk>"
_WORDS_TEXT = """
. , ; : ! ? ' -
the a an of to in on at by for with from and or but not no is was are were be
it he she they we you i his her their its this that these those
cat dog bird fish river bank money water tree house road city king queen man woman
sat ran saw ate gave took went came said made found kept
big small old new red green dirty quantum plumbing quick brown lazy fox jumps over
one two three first last very all some
"""
WORDS = tuple(_WORDS_TEXT.split())


def build_tokenizer(vocab_size: int) -> Tokenizer:
    """``<unk>`` and the first ``vocab_size - 1`` of ``WORDS`` (padded with "w0", "w1", ...),
    lower-cased, split on whitespace and punctuation (``tokenizers``' ``Whitespace``: runs of
    word characters, runs of the rest)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    words = list(dict.fromkeys(WORDS))
    words += [f"w{i}" for i in range(max(0, vocab_size - 1 - len(words)))]
    vocab = {UNK: 0, **{word: i + 1 for i, word in enumerate(words[: vocab_size - 1])}}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token=UNK))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    return tokenizer


def tokenize_gpt2(model: GPT2Model, text: str, max_tokens: int | None) -> Tokens:
    """``text`` as the model's word-level tokens, at most ``max_tokens`` (default the config's
    ``max_tokens``; the first ones kept, ``n_cut`` the rest). No [CLS]/[SEP]: nothing special."""
    limit = model.config.max_tokens if max_tokens is None else max_tokens
    if limit < 1:
        raise ValueError(f"max_tokens must be at least 1, got {limit}")
    enc = model.tokenizer.encode(text)
    n = len(enc.ids)
    if n == 0:
        raise ValueError("text has no tokens")
    keep = min(n, limit)
    offsets = np.asarray(enc.offsets[:keep], np.int64).reshape(keep, 2)
    pieces = tuple(
        (SPACE if start > 0 and text[start - 1].isspace() else "") + text[start:end]
        for start, end in offsets.tolist()
    )
    return Tokens(
        text=text,
        tokens=pieces,
        input_ids_t=np.asarray(enc.ids[:keep], np.int64),
        offsets_t2=offsets,
        special_t=np.zeros(keep, bool),
        n_cut=n - keep,
    )
