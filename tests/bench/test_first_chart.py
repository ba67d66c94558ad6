"""bench.first_chart's parts that are not timing: the named steps are wrapped and put back, the
2,048-token text the page is given, and the check that the app reads that many tokens."""

from __future__ import annotations

import importlib

import pytest

from attention_core import load_config, load_model, tokenize
from attention_core.core.tokens import MAX_CHARS
from bench.first_chart import LONG_TOKENS, STEPS, landed, one_line, timed_steps


def test_each_step_is_timed_where_the_page_calls_it_and_put_back_after():
    originals = [getattr(importlib.import_module(m), name) for m, name, _ in STEPS]
    model = load_model("minilm")
    spent: dict[str, float] = {}
    with timed_steps(spent):
        forward = importlib.import_module("attention_core.models.bert.forward")
        assert forward.run_bert is not originals[0]
        trace = importlib.import_module("attention_core").trace_sentence(model, "A river bank.")
    assert trace.n_tokens == len(tokenize(model, "A river bank."))
    assert set(spent) == {"forward pass (run_bert)", "tokenizer, every call"}
    assert all(seconds > 0 for seconds in spent.values())
    after = [getattr(importlib.import_module(m), name) for m, name, _ in STEPS]
    assert after == originals


def test_the_long_text_is_one_line_the_box_accepts_and_makes_2048_tokens():
    model = load_model("smollm2")
    if model.config.max_tokens < LONG_TOKENS:
        pytest.skip(f"SmolLM2 reads {model.config.max_tokens} tokens here, not {LONG_TOKENS}")
    text = one_line(model, LONG_TOKENS)
    assert "\n" not in text and len(text) <= MAX_CHARS
    tokens = tokenize(model, text)
    assert len(tokens) == LONG_TOKENS and tokens.n_cut >= 1  # the page cuts just past it


def test_the_long_rows_run_only_once_the_app_reads_2048_tokens():
    limit = load_config("smollm2").max_tokens
    try:
        landed()
    except RuntimeError as err:
        assert limit < LONG_TOKENS and f"reads {limit} tokens" in str(err)
    else:
        assert limit >= LONG_TOKENS
