"""SmolLM2 in NumPy against transformers' own model on the same GGUF (the oracle, eager attention,
float32): token ids, patterns, hidden states, next-token probabilities, greedy generation."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from attention_core import (  # noqa: E402
    WhatIf,
    chat_prompt,
    choose,
    softmax,
    start_generation,
    tokenize,
    trace_sentence,
)
from tests.core.oracles import llama_oracle  # noqa: E402

LONG = " ".join(
    f"Line {i}: the río flows past naïve cafés, {i * 7} boats & 3.5 km of dirty quantum plumbing."
    for i in range(40)
)
SENTENCES = [
    "The capital of France is",
    "dirty quantum plumbing",
    "def f(x): return x**2",
    "Über den Wolken muss die Freiheit wohl grenzenlos sein, à côté du café.",
    'Wait... what?! 🤔🎉 (yes) — "quoted" & <tags>\n\tnext line',
    LONG,
]


@pytest.fixture(scope="module")
def oracle():
    """transformers' LlamaForCausalLM and tokenizer from the same GGUF, loaded once per process
    (~17 s) and shared with the other reference tests (tests/core/oracles.py)."""
    loaded = llama_oracle()
    return loaded.tokenizer, loaded.model


def _run_oracle(model, ids):
    with torch.no_grad():
        out = model(torch.as_tensor(ids)[None], output_attentions=True, output_hidden_states=True)
    pattern = np.stack([a[0].numpy() for a in out.attentions])
    hidden = np.stack([h[0].numpy() for h in out.hidden_states])
    probs = torch.softmax(out.logits[0].float(), dim=-1).numpy()
    return pattern, hidden, probs


@pytest.mark.parametrize("text", SENTENCES, ids=lambda s: s[:24])
def test_trace_matches_transformers(smollm2, oracle, text):
    tok, model = oracle
    ref_ids = tok(text)["input_ids"]
    tokens = tokenize(smollm2, text, 512)  # every layer's attentions: 2,048 in test_llama_long
    assert tokens.input_ids_t.tolist() == ref_ids[:512]
    assert tokens.n_cut == max(0, len(ref_ids) - 512)
    trace = trace_sentence(smollm2, text, max_tokens=512)
    pattern, hidden, probs = _run_oracle(model, ref_ids[:512])
    assert np.abs(np.asarray(trace.pattern_lhqk) - pattern).max() <= 1e-4
    rel = np.abs(trace.hidden_ltd - hidden).max(axis=(1, 2)) / np.abs(hidden).max(axis=(1, 2))
    assert rel.max() <= 1e-4, rel
    ours = trace.next_top_probs_tk
    theirs = np.take_along_axis(probs, trace.next_top_ids_tk, axis=-1)
    assert np.abs(ours - theirs).max() <= 1e-4
    top2 = np.sort(probs, axis=-1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > 1e-3
    assert (trace.next_top_ids_tk[clear, 0] == probs.argmax(-1)[clear]).all()
    last = trace.n_tokens - 1
    assert np.abs(trace.next_probs_v(last) - probs[last]).max() <= 1e-4


def test_the_capital_of_france_is_paris(smollm2):
    trace = trace_sentence(smollm2, "The capital of France is")
    assert smollm2.tokenizer.decode([int(trace.next_top_ids_tk[-1, 0])]) == " Paris"


def test_the_causal_switch_is_ignored_and_hidden_keys_apply(smollm2, oracle):
    text = "dirty quantum plumbing leaks"
    plain = trace_sentence(smollm2, text, WhatIf(causal=False))
    assert plain.whatif.causal
    assert np.array_equal(
        np.asarray(plain.pattern_lhqk), trace_sentence(smollm2, text).pattern_lhqk
    )
    hidden = trace_sentence(smollm2, text, WhatIf(hidden=(1,)))
    tok, model = oracle
    ids = tok(text)["input_ids"]
    mask = torch.ones(1, len(ids), dtype=torch.long)
    mask[0, 1] = 0
    with torch.no_grad():
        out = model(torch.as_tensor(ids)[None], attention_mask=mask, output_attentions=True)
    ref = np.stack([a[0].numpy() for a in out.attentions])
    assert np.abs(np.asarray(hidden.pattern_lhqk)[:, :, 2:] - ref[:, :, 2:]).max() <= 1e-4
    assert (np.asarray(hidden.pattern_lhqk)[:, :, :, 1] == 0).all()


def test_greedy_generation_equals_transformers_generate(smollm2, oracle):
    tok, model = oracle
    prompt = "The capital of France is"
    ids = tok(prompt)["input_ids"]
    with torch.no_grad():
        ref = model.generate(
            torch.as_tensor(ids)[None],
            do_sample=False,
            max_new_tokens=10,
            attention_mask=torch.ones(1, len(ids), dtype=torch.long),
            pad_token_id=2,
        )[0].tolist()
    gen = start_generation(smollm2, prompt, max_new_tokens=10)
    while not gen.finished:
        gen = gen.step(choose(gen.last))
    assert list(gen.ids) == ref[: len(gen.ids)]
    assert len(gen.ids) == len(ref) or gen.ids[-1] == smollm2.eos_id


def test_generation_probabilities_match_a_full_pass(smollm2, oracle):
    _, model = oracle
    gen = start_generation(smollm2, "dirty quantum plumbing", max_new_tokens=4)
    for _ in range(3):
        gen = gen.step(choose(gen.last))
    *_, probs = _run_oracle(model, gen.ids)
    top = gen.last.top_ids_k
    assert np.abs(gen.last.top_probs_k - probs[-1][top]).max() <= 1e-4
    assert softmax(gen.last.logits_v).argmax() == probs[-1].argmax()


def test_chat_prompt_is_the_gguf_chat_template(smollm2, oracle):
    tok, _ = oracle
    messages = [{"role": "user", "content": "What is attention?"}]
    expected = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert chat_prompt("What is attention?") == expected
    assert tokenize(smollm2, expected).input_ids_t.tolist() == tok(expected)["input_ids"]
