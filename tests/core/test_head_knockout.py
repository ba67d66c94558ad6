"""Head knock-out against transformers' own models with the head switched off there.

The reference knocks a head out with a forward pre-hook on the output projection
(``attention.output.dense`` / ``self_attn.o_proj``) that zeroes that head's slice of its input
(the heads' z side by side), then reads ``output_hidden_states``, ``output_attentions`` and the
logits. Layer and head numbers are 0-based, as the app labels them.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pytest

from attention_core import WhatIf, trace_sentence
from attention_core.methods.geometry import cosine
from attention_core.methods.knockout import (
    head_importance,
    knock_out,
    parse_heads,
    prediction_change,
    vector_change,
)
from tests.core.oracles import SENTENCES, cli_npz, reference, relative_error_l, settled

# Head sets per model: one head, two heads in different layers, three incl. two of one layer.
KNOCKS = {
    "minilm": [((2, 5),), ((0, 3), (4, 7)), ((1, 2), (5, 0), (5, 11))],
    "smollm2": [((3, 7),), ((0, 1), (3, 7)), ((10, 4), (10, 5), (20, 8))],
}
CASES = [
    (k, s, heads) for k, sets in KNOCKS.items() for heads in sets for s in ("repeated", "long")
]


class Case(NamedTuple):
    key: str
    engine: Any
    heads: tuple[tuple[int, int], ...]
    base: Any  # our trace with every head
    knocked: Any  # ours with ``heads`` knocked out
    ref: Any  # transformers' run with every head
    ref_knocked: Any  # and with ``heads`` zeroed before the output projection


def _case(engines, key: str, name: str, heads: tuple[tuple[int, int], ...]) -> Case:
    text = SENTENCES[name]
    base = trace_sentence(engines[key], text)
    knocked = knock_out(engines[key], base, heads)
    ref, ref_knocked = reference(key, text), reference(key, text, heads)
    return Case(key, engines[key], heads, base, knocked, ref, ref_knocked)


@pytest.fixture(scope="module", params=CASES, ids=str)
def case(request, engines) -> Case:
    return _case(engines, *request.param)


@pytest.fixture(scope="module", params=[c for c in CASES if c[0] == "smollm2"], ids=str)
def decoder_case(request, engines) -> Case:
    return _case(engines, *request.param)


def _assert_hidden_equal(key: str, ours, theirs: np.ndarray) -> None:
    if key == "smollm2":  # the stream reaches ~800: relative to each layer's largest value
        assert relative_error_l(ours, theirs).max() <= 1e-4
    else:
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-4)


def test_the_knocked_run_equals_the_hooked_reference(case):
    assert case.knocked.whatif.knocked == case.heads
    _assert_hidden_equal(case.key, case.knocked.hidden_ltd, case.ref_knocked.hidden_ltd)
    pattern = np.asarray(case.knocked.pattern_lhqk)
    assert np.abs(pattern - case.ref_knocked.pattern_lhqk).max() <= 1e-4
    # not vacuous: the knock-out moved the last layer's vectors far past the tolerance
    moved = relative_error_l(case.ref_knocked.hidden_ltd, case.ref.hidden_ltd)
    first = case.heads[0][0]
    assert moved[: first + 1].max() == 0 and moved[-1] > 1e-2, moved


def test_the_whatif_switch_gives_the_same_run(case):
    again = trace_sentence(case.engine, case.base.tokens.text, WhatIf(knocked=case.heads[::-1]))
    assert again.whatif.knocked == case.heads
    np.testing.assert_array_equal(again.hidden_ltd, case.knocked.hidden_ltd)


def test_next_token_probabilities_equal_the_reference(decoder_case):
    base, knocked, ref, ref_knocked = decoder_case[3:]
    for position in (base.n_tokens // 2, base.n_tokens - 1):
        assert np.abs(knocked.next_probs_v(position) - ref_knocked.probs_tv[position]).max() <= 1e-4
        assert np.abs(base.next_probs_v(position) - ref.probs_tv[position]).max() <= 1e-4


def _top10(probs_v: np.ndarray) -> np.ndarray:
    return np.argsort(-probs_v, kind="stable")[:10]


def test_prediction_change_against_the_reference_distributions(decoder_case):
    base, knocked, ref, ref_knocked = decoder_case[3:]
    position = base.n_tokens - 1
    change = prediction_change(base, knocked, position)
    p_v, q_v = ref.probs_tv[position], ref_knocked.probs_tv[position]
    for ids, probs, theirs_v in (
        (change.before_ids, change.before_probs, p_v),
        (change.after_ids, change.after_probs, q_v),
    ):
        assert len(ids) == len(probs) == 10
        np.testing.assert_allclose(probs, theirs_v[ids], atol=1e-4)
        np.testing.assert_allclose(probs, np.sort(theirs_v)[::-1][:10], atol=1e-4)
        sure = settled(np.sort(theirs_v)[::-1][:11])  # ranks before the first near-tie
        assert (ids[sure] == _top10(theirs_v)[sure]).all()
    diff_v = q_v - p_v
    assert diff_v[change.lost_id] <= diff_v.min() + 1e-4
    assert diff_v[change.gained_id] >= diff_v.max() - 1e-4
    np.testing.assert_allclose(change.lost, (p_v[change.lost_id], q_v[change.lost_id]), atol=1e-4)
    gained = (p_v[change.gained_id], q_v[change.gained_id])
    np.testing.assert_allclose(change.gained, gained, atol=1e-4)


def _sentence_embedding(hidden_td: np.ndarray) -> np.ndarray:
    """sentence-transformers' pooling for all-MiniLM-L6-v2: mean over tokens, L2 norm."""
    pooled = hidden_td.astype(np.float64).mean(axis=0)
    return pooled / np.linalg.norm(pooled)


def test_vector_change_equals_the_reference_cosines(case):
    key, base, knocked, ref, ref_knocked = case[0], *case[3:]
    token = base.n_tokens // 2
    change = vector_change(base, knocked, token)
    theirs_l = cosine(ref.hidden_ltd[:, token].astype(np.float64), ref_knocked.hidden_ltd[:, token])
    assert change.cosine_l.shape == (base.config.n_layers + 1,)
    np.testing.assert_allclose(change.cosine_l, theirs_l, rtol=0, atol=1e-5)
    first = min(layer for layer, _ in knocked.whatif.knocked)
    np.testing.assert_allclose(change.cosine_l[: first + 1], 1.0, atol=1e-6)
    if key == "minilm":
        before, after = (_sentence_embedding(r.hidden_ltd[-1]) for r in (ref, ref_knocked))
        assert change.sentence_cosine == pytest.approx(float(before @ after), abs=1e-6)
    else:
        assert change.sentence_cosine is None


@pytest.mark.parametrize("key", list(KNOCKS))
def test_the_cli_knock_writes_the_knocked_run(key):
    text = SENTENCES["punctuation"]
    npz = cli_npz(key, text, "--knock", "3.7,0.1")
    assert npz["knocked"].tolist() == [[0, 1], [3, 7]]
    _assert_hidden_equal(key, npz["hidden"], reference(key, text, ((0, 1), (3, 7))).hidden_ltd)


def test_parse_heads_reads_the_app_labels():
    assert parse_heads("3.7,0.1") == ((0, 1), (3, 7))
    assert parse_heads(" 5.0 , 5.0") == ((5, 0),)
    for bad in ("3", "3.x", "-1.2", "3.7;0.1"):
        with pytest.raises(ValueError):
            parse_heads(bad)


# -- head_importance: each head knocked out alone ------------------------------------------------


def _importance(engine, text: str, position: int):
    calls: list[tuple[int, int]] = []
    trace = trace_sentence(engine, text)
    importance = head_importance(engine, trace, position, lambda *done: calls.append(done))
    done, total = zip(*calls, strict=True)
    assert set(total) == {done[-1]} and list(done) == sorted(set(done)), calls
    n_layers = trace.config.n_layers
    assert importance.effect_lh.shape == (n_layers, trace.config.n_heads)
    ranked = importance.ranked()
    assert len(ranked) == importance.effect_lh.size
    assert [e for *_, e in ranked] == sorted(importance.effect_lh.ravel(), reverse=True)
    assert all(importance.effect_lh[lay, h] == e for lay, h, e in ranked)
    return importance


def test_encoder_importance_equals_every_single_head_knockout_of_the_reference(model):
    text, position = SENTENCES["short"], 2  # "cat"
    importance = _importance(model, text, position)
    final_d = reference("minilm", text).hidden_ltd[-1, position].astype(np.float64)
    theirs = np.zeros_like(importance.effect_lh)
    for layer, head in np.ndindex(*theirs.shape):
        knocked_d = reference("minilm", text, ((layer, head),)).hidden_ltd[-1, position]
        theirs[layer, head] = 1.0 - cosine(final_d, knocked_d.astype(np.float64))
    np.testing.assert_allclose(importance.effect_lh, theirs, rtol=0, atol=1e-5)
    assert importance.ranked()[0][:2] == np.unravel_index(theirs.argmax(), theirs.shape)


@pytest.mark.parametrize(("name", "position"), [("short", 3), ("repeated", 5)])
def test_decoder_importance_equals_the_reference_probability_drop(smollm2, name, position):
    text = SENTENCES[name]
    importance = _importance(smollm2, text, position)
    p_v = reference("smollm2", text).probs_tv[position]
    top = int(p_v.argmax())
    heads = [(lay, h) for lay, h, _ in importance.ranked()[:3]] + [(0, 0), (15, 4), (29, 8)]
    for layer, head in heads:
        q_v = reference("smollm2", text, ((layer, head),)).probs_tv[position]
        expected = p_v[top] - q_v[top]
        assert importance.effect_lh[layer, head] == pytest.approx(expected, abs=1e-4), (layer, head)
