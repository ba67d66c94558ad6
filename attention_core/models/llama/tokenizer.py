"""The byte-level BPE tokenizer a Llama GGUF describes, and Llama text -> ``Tokens``.

Built as transformers builds it from the same file (``GPT2Tokenizer`` from the vocabulary and
merges, ByteLevel pre-tokenizer without a prefix space, the control tokens added as special,
no BOS), so the ids are the ones ``AutoTokenizer.from_pretrained(folder, gguf_file=...)`` gives.
Pieces are shown as the text they stand for: "Ġ" (a byte-level space) becomes "▁", a newline "⏎".
"""

from __future__ import annotations

from typing import Any

from attention_core.core.config import ModelConfig
from attention_core.core.pieces import byte_alphabet, first_pieces, show_piece
from attention_core.core.tokens import Tokens

_CONTROL = 3  # llama.cpp's token type for control tokens such as <|im_end|>


def build_tokenizer(metadata: dict[str, Any]) -> Any:
    """A ``tokenizers.Tokenizer`` from a GGUF's ``tokenizer.ggml.*`` metadata."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    spelled, alphabet = byte_alphabet(), set(byte_alphabet().values())
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


def tokenize_llama(
    tokenizer: Any, config: ModelConfig, text: str, max_tokens: int | None = None
) -> Tokens:
    """Tokenize ``text`` as the model does (no BOS); keep the first ``max_tokens`` (default:
    the config's ``max_tokens``), ``n_cut`` counting the pieces dropped."""
    limit = config.max_tokens if max_tokens is None else max_tokens
    return first_pieces(tokenizer, text, limit, config.n_positions, show_piece)
