"""The glossary's entries: one plain sentence each, and patterns that fire on the phrases the pages
use and not inside other words; the numbers the sentences quote are the models' configs."""

from __future__ import annotations

import re

import pytest

from attention_core.lessons.glossary import TERMS, help_text, term, terms_in
from attention_core.models import load_config


def _names(text: str) -> list[str]:
    return [t.name for t in terms_in(text)]


def test_names_are_unique_and_there_are_enough():
    names = [t.name for t in TERMS]
    assert len(names) == len(set(names))
    assert 40 <= len(names) <= 70


@pytest.mark.parametrize("t", TERMS, ids=lambda t: t.name)
def test_each_sentence_is_one_plain_sentence(t):
    s = t.sentence
    assert s.endswith(".") and (s[0].isupper() or s[0] in "[√Δd")
    # one sentence: no full stop followed by a new sentence inside it
    assert not re.search(r"[.!?] +[A-Z]", s[:-1]), s
    assert len(s) <= 260, (t.name, len(s))
    assert "$" not in s and "`" not in s  # plain words, no formula or code markup


@pytest.mark.parametrize("t", TERMS, ids=lambda t: t.name)
def test_each_term_is_found_in_its_own_name_or_sentence(t):
    """A pattern that matches nothing a learner would write is a dead entry."""
    assert t.pattern.search(t.name) or t.pattern.search(t.sentence), t.name


@pytest.mark.parametrize(
    ("text", "absent"),
    [
        ("the keyboard", "key"),
        ("a biased coin", "bias"),
        ("the tokenizer splits", "token"),
        ("LayerNorm first", "layer"),
        ("ahead of time", "head"),
        ("a vectorized loop", "vector"),
        ("the frameworks", "frame"),
    ],
)
def test_patterns_keep_to_whole_words(text, absent):
    assert absent not in _names(text)


def test_order_of_first_mention():
    text = "Softmax turns each token's scores into weights; a head does it again. Tokens..."
    assert _names(text)[:3] == ["softmax", "token", "score"]
    assert _names(text).count("token") == 1


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("divided by √d_k", "√d_k"),
        (r"$\frac{q \cdot k}{\sqrt{d_k}}$", "√d_k"),
        ("with d_k = 32", "d_k"),
        ("2·n·d·d_ff", "d_ff"),
        ("[CLS] and [SEP]", "[CLS] and [SEP]"),
        ("its aligning heads", "aligning head"),
        ("Spearman's ρ = 0.8", "rank correlation ρ"),
        ("the norm-weighted view", "norm-weighted"),
        ("the sentence embedding moves", "sentence embedding"),
        ("its hidden states", "hidden state"),
        ("softmax saturates", "saturate"),
        ("entropy (bits)", "entropy"),
        ("value vectors", "value"),
        ("queries, keys and values", "value"),
        ("RMSNorm", "RMSNorm"),
        ("on a log-log chart, slope 2", "log-log chart"),
        ("the multiply-adds", "multiply-add"),
        ("knocked out", "knock-out"),
    ],
)
def test_patterns_find_the_pages_phrases(text, name):
    assert name in _names(text)


@pytest.mark.parametrize("model", ["minilm", "smollm2", "whisper"])
def test_the_numbers_the_sentences_quote_are_the_models(model):
    cfg = load_config(model)
    assert f"{cfg.vocab_size:,}" in term("vocabulary").sentence
    assert f"{cfg.d_ff:,}" in term("d_ff").sentence
    assert str(cfg.d_model) in term("vector").sentence
    assert str(cfg.d_head) in term("d_k").sentence
    assert f"{cfg.n_heads} " in term("head").sentence
    assert f"{cfg.n_layers} in" in term("layer").sentence
    said = term("bias").sentence
    assert cfg.attention_bias == (model != "smollm2") and "SmolLM2 has none" in said


def test_smollm2_shares_key_value_heads_as_said():
    cfg = load_config("smollm2")
    said = term("shared key/value heads").sentence
    assert f"{cfg.n_heads} query heads, {cfg.n_kv_heads} key/value heads" in said
    assert load_config("minilm").n_kv_heads == load_config("minilm").n_heads


def test_help_text_names_each_term_once_in_bold():
    terms = terms_in("a head's softmax")
    assert help_text(terms) == "\n\n".join(f"**{t.name}**: {t.sentence}" for t in terms)


def test_the_segment_vector_is_one_vector_for_a_single_sentence():
    """The positions step's caption and the glossary: t is the same for every token of one
    sentence, read against transformers' BertModel weights (its token_type_embeddings row 0)."""
    import numpy as np

    from attention_core import trace_sentence
    from attention_core.models import load_model
    from references.text import oracle

    trace = trace_sentence(load_model("minilm"), "The river bank was muddy.")
    t_td = trace.token_type_td
    np.testing.assert_array_equal(t_td, np.broadcast_to(t_td[0], t_td.shape))
    bert = oracle("minilm").model
    row = bert.embeddings.token_type_embeddings.weight[0].detach().numpy()
    np.testing.assert_allclose(t_td[0], row, atol=1e-6)


def test_a_term_inside_a_longer_one_is_not_a_mention():
    assert "embedding" not in _names("Sentence embedding cosine, layer 4, head 2 off")
    assert "sentence embedding" in _names("Sentence embedding cosine, layer 4, head 2 off")
    assert "logit" not in _names("the logit lens")
    # the shorter term still counts where it stands alone in the same text
    assert "embedding" in _names("the sentence embedding and each token's embedding")
