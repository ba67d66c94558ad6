"""Generating with SmolLM2 through the KV cache: each step equals a full pass, rewinding and
branching never change a generation someone still holds, choices are seeded."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attention_core import WhatIf, choose, start_generation, tokenize
from attention_core.models.llama.forward import run_llama

PROMPT = "The river bank was muddy, so"


def _greedy(gen, n):
    for _ in range(n):
        gen = gen.step(choose(gen.last))
    return gen


def test_each_step_equals_the_last_row_of_a_full_pass(smollm2):
    gen = _greedy(start_generation(smollm2, PROMPT, max_new_tokens=6), 5)
    n = len(gen.ids)
    tokens = replace(
        tokenize(smollm2, PROMPT),
        input_ids_t=np.asarray(gen.ids),
        tokens=gen.tokens,
        offsets_t2=np.zeros((n, 2), np.int64),
        special_t=np.zeros(n, bool),
    )
    trace = run_llama(smollm2, tokens, WhatIf(), keep_layers=True)
    pattern = np.asarray(trace.pattern_lhqk)
    assert len(gen.steps) == 6
    for step in gen.steps:
        p = step.position
        assert step.pattern_lhk.shape == (30, 9, p + 1)
        assert np.abs(step.pattern_lhk - pattern[:, :, p, : p + 1]).max() <= 1e-5
        assert np.array_equal(step.top_ids_k[:3], trace.next_top_ids_tk[p, :3])
        assert np.abs(step.top_probs_k - trace.next_top_probs_tk[p]).max() <= 1e-5
    assert np.abs(gen.k_lgte - np.asarray(trace.k_lgke)).max() <= 1e-4
    assert gen.k_lgte.shape == (30, 3, n, 64)
    assert gen.n_prompt == len(tokenize(smollm2, PROMPT))


def test_rewind_then_step_equals_a_fresh_path_and_keeps_the_old_one(smollm2):
    gen = _greedy(start_generation(smollm2, PROMPT, max_new_tokens=8), 4)
    kept_k, kept_steps = gen.k_lgte.copy(), [s.pattern_lhk.copy() for s in gen.steps]
    second = int(gen.steps[1].top_ids_k[1])  # the runner-up at the first generated position
    branch = gen.rewind(gen.n_prompt + 1).step(second)
    fresh = start_generation(smollm2, PROMPT, max_new_tokens=8)
    fresh = fresh.step(gen.ids[gen.n_prompt]).step(second)
    assert branch.ids == fresh.ids
    for a, b in zip(branch.steps, fresh.steps, strict=True):
        assert np.abs(a.pattern_lhk - b.pattern_lhk).max() <= 1e-6
        assert np.array_equal(a.top_ids_k, b.top_ids_k)
    assert np.array_equal(gen.k_lgte, kept_k)  # the longer generation is untouched
    assert all(np.array_equal(s.pattern_lhk, k) for s, k in zip(gen.steps, kept_steps, strict=True))
    again = gen.step(choose(gen.last))  # and still steps on
    assert again.ids[:-1] == gen.ids


def test_two_steps_from_one_generation_do_not_share_a_position(smollm2):
    gen = start_generation(smollm2, PROMPT, max_new_tokens=4)
    first, runner_up = (int(i) for i in gen.last.top_ids_k[:2])
    a, b = gen.step(first), gen.step(runner_up)
    assert a.ids[-1] == first and b.ids[-1] == runner_up
    assert not np.array_equal(a.k_lgte[:, :, -1], b.k_lgte[:, :, -1])
    assert np.array_equal(a.k_lgte[:, :, :-1], b.k_lgte[:, :, :-1])
    assert a.last.position == b.last.position == gen.n_prompt


def test_finishes_at_max_new_tokens_and_then_refuses(smollm2):
    gen = _greedy(start_generation(smollm2, PROMPT, max_new_tokens=3), 3)
    assert gen.finished and len(gen.ids) == gen.n_prompt + 3
    with pytest.raises(ValueError, match="finished"):
        gen.step(0)
    with pytest.raises(ValueError):
        gen.rewind(gen.n_prompt - 1)
    assert gen.cache_nbytes == 2 * 30 * 3 * (gen.n_prompt + 3) * 64 * 4
    assert gen.text == smollm2.tokenizer.decode(list(gen.ids[gen.n_prompt :]))


def test_choose_is_greedy_at_zero_and_seeded_otherwise(smollm2):
    step = start_generation(smollm2, "Once upon a time", max_new_tokens=2).last
    assert choose(step) == step.greedy_id == int(np.argmax(step.logits_v))
    assert choose(step, temperature=1.5, top_k=1, seed=3) == step.greedy_id
    draws = [choose(step, temperature=1.2, seed=s, step_index=0) for s in range(40)]
    assert draws == [choose(step, temperature=1.2, seed=s, step_index=0) for s in range(40)]
    assert len(set(draws)) > 1
    top5 = set(step.top(1.0, 5)[0].tolist())
    assert {choose(step, temperature=2.0, top_k=5, seed=s) for s in range(30)} <= top5
    _, hot_probs = step.top(temperature=2.0)
    assert hot_probs[0] < step.top_probs_k[0] and np.all(np.diff(hot_probs) <= 0)
    assert abs(step.probs_v(2.0).sum() - 1) < 1e-9
    with pytest.raises(ValueError):
        choose(step, temperature=-1)
