"""Sentences of an exact token count, made of real words, for the benchmarks (app, explorer,
classroom, decoder, soak): each variant its own text, so no section finds another's trace cached."""

from __future__ import annotations

from attention_core import LlamaModel, Model, tokenize

PARAGRAPH = (
    "The river bank was muddy after the storm, so the children walked along the old stone "
    "bridge instead. Their teacher had told them that water always finds the lowest path, and "
    "that the town grew up here because boats could carry grain and timber to the sea. Today "
    "the mills are quiet, but people still come to fish, to read on the benches, and to watch "
    "the light change on the water in the evening. A small museum near the bank keeps maps, "
    "letters and photographs from the years when the harbour was busy and the bank on the main "
    "street lent money to merchants who bought their first ships."
)
SIZES = (12, 128, 512)  # the sentence lengths the app and explorer benchmarks measure
_SENTENCES: dict[tuple[int, int], str] = {}


def sentence(model: Model | LlamaModel, n_tokens: int, variant: int = 0) -> str:
    """Real words from PARAGRAPH, rotated by ``variant`` (each under 110 gives its own text), that
    make exactly ``n_tokens`` tokens. Variants in use: 0 explorer switches and BertViz, 1-10 all
    heads, 11-80 new sentence per page, 81-90 sessions, 91-100 explorer new sentence, so no
    section finds another's trace cached."""
    key = (n_tokens, variant)
    if key not in _SENTENCES:
        _SENTENCES[key] = _build_sentence(model, n_tokens, variant)
    return _SENTENCES[key]


def _build_sentence(model: Model | LlamaModel, n_tokens: int, variant: int) -> str:
    words = PARAGRAPH.split()
    start = (variant * 7) % len(words)  # 7 and 110 are coprime: 110 different rotations
    pool = (words[start:] + words[:start]) * (n_tokens // len(words) + 1)

    def count(n_words: int) -> int:
        got = tokenize(model, " ".join(pool[:n_words]))
        return len(got) + got.n_cut

    lo, hi = 1, min(len(pool), n_tokens)  # largest word count that stays within n_tokens
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if count(mid) <= n_tokens else (lo, mid - 1)
    text = " ".join(pool[:lo]) + " and" * (n_tokens - count(lo))  # "and" is one token
    got = tokenize(model, text)
    if len(got) != n_tokens or got.n_cut:
        raise ValueError(f"built {len(got)} tokens ({got.n_cut} cut), wanted {n_tokens}")
    return text
