"""Hiding a word: the engine's pass with hidden tokens against transformers run with
``attention_mask`` 0 at those positions, mean pooling that leaves them out, and the measured effect
of hiding "river" (against hiding "was") on "bank".
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from attention_core import (  # noqa: E402
    WhatIf,
    compare_passes,
    embed_words,
    hide_word,
    run_model,
    tokenize,
    trace_sentence,
    word_pieces,
)
from tests.core.sentences import LONG_256  # noqa: E402

RIVER = "The river bank was muddy"  # [CLS] the river bank was muddy [SEP]
FOREST = "the fluffy blue creature roamed the verdant forest"  # verdant = ve ##rdan ##t
MONEY_PROBES = ("money", "loan", "finance", "cash")

# (sentence, hidden positions): one word, a three-piece word, two words, [CLS], the last word
CASES = {
    "river": (RIVER, (2,)),
    "verdant": (FOREST, (8, 9, 10)),
    "fluffy_and_blue": (FOREST, (2, 3)),
    "cls": ("dirty quantum plumbing", (0,)),
    "muddy": ("The river bank was muddy after the storm.", (5,)),
}


@pytest.fixture(scope="module")
def hf_model(model):
    hf = transformers.AutoModel.from_pretrained(str(model.path), attn_implementation="eager")
    return hf.eval()


def _hf_run(hf_model, input_ids_t: np.ndarray, mask_t: np.ndarray):
    with torch.no_grad():
        return hf_model(
            input_ids=torch.from_numpy(input_ids_t)[None],
            attention_mask=torch.from_numpy(mask_t.astype(np.int64))[None],
            output_attentions=True,
            output_hidden_states=True,
        )


def _mean_pool(last_hidden, mask_t: np.ndarray) -> np.ndarray:
    """sentence-transformers' mean pooling and Normalize, written in torch."""
    weights = torch.from_numpy(mask_t.astype(np.float32))[:, None]
    pooled = (last_hidden[0] * weights).sum(dim=0) / weights.sum().clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled, dim=0).numpy()


@pytest.fixture(scope="module", params=list(CASES), ids=list(CASES))
def hidden_pair(request, model, hf_model):
    """(our trace with the tokens hidden, transformers' output with attention_mask 0 there)."""
    text, hidden = CASES[request.param]
    trace = trace_sentence(model, text, WhatIf(hidden=hidden))
    mask_t = np.ones(trace.n_tokens, dtype=bool)
    mask_t[list(hidden)] = False
    return trace, _hf_run(hf_model, trace.tokens.input_ids_t, mask_t), mask_t


def test_hidden_case_pieces_are_the_words_meant(model):
    assert word_pieces(tokenize(model, FOREST), "verdant") == (8, 9, 10)
    assert word_pieces(tokenize(model, RIVER), "River") == (2,)


def test_patterns_equal_output_attentions_with_the_mask(hidden_pair):
    trace, out, mask_t = hidden_pair
    theirs = np.stack([a[0].numpy() for a in out.attentions])  # [l,1,h,q,k] -> [l,h,q,k]
    np.testing.assert_allclose(trace.pattern_lhqk, theirs, rtol=0, atol=1e-5)
    assert (trace.pattern_lhqk[..., ~mask_t] == 0).all()  # no query reads a hidden key
    np.testing.assert_allclose(trace.pattern_lhqk.sum(axis=-1), 1.0, atol=1e-5)


def test_hidden_states_equal_output_hidden_states_with_the_mask(hidden_pair):
    trace, out, mask_t = hidden_pair
    theirs = np.stack([h[0].numpy() for h in out.hidden_states])
    # The tokens the others can see, and the hidden ones too: each still runs its own query row.
    np.testing.assert_allclose(trace.hidden_ltd[:, mask_t], theirs[:, mask_t], rtol=0, atol=1e-4)
    np.testing.assert_allclose(trace.hidden_ltd, theirs, rtol=0, atol=1e-4)


def test_pooled_embedding_leaves_the_hidden_tokens_out(hidden_pair):
    trace, out, mask_t = hidden_pair
    theirs = _mean_pool(out.last_hidden_state, mask_t)
    np.testing.assert_allclose(trace.sentence_embedding_d, theirs, rtol=0, atol=1e-5)
    assert float(trace.sentence_embedding_d @ theirs) >= 0.99999


def test_steps_of_a_hidden_trace_rebuild_its_pattern(hidden_pair):
    trace, _, _ = hidden_pair
    np.testing.assert_allclose(trace.steps(3, 5).pattern, trace.pattern_lhqk[3, 5], atol=1e-6)


def test_past_the_256_window_the_pooled_embedding_keeps_the_mask(model, hf_model):
    """A long text pools its first 256 tokens: hidden positions inside that window (and the final
    [SEP], which moves to the window's end) stay hidden there."""
    full = tokenize(model, LONG_256)
    last = len(full) - 1
    trace = trace_sentence(model, LONG_256, WhatIf(hidden=(5, 300, last)))
    window = tokenize(model, LONG_256, 256)
    mask_t = np.ones(256, dtype=bool)
    mask_t[[5, 255]] = False
    out = _hf_run(hf_model, window.input_ids_t, mask_t)
    theirs = _mean_pool(out.last_hidden_state, mask_t)
    assert float(trace.sentence_embedding_d @ theirs) >= 0.99999


def test_whatif_hidden_is_a_sorted_hashable_cache_key():
    assert WhatIf(hidden=[3, 2, 3]) == WhatIf(hidden=(2, 3))
    assert hash(WhatIf(hidden=(3, 2))) == hash(WhatIf(hidden=(2, 3)))
    assert WhatIf(hidden=(np.int64(4),)).hidden == (4,)


@pytest.mark.parametrize("bad", [(-1,), (1.5,), (True,), "12", 3, ((1, 2),)])
def test_whatif_rejects_what_is_not_a_position(bad):
    with pytest.raises(ValueError, match="token positions"):
        WhatIf(hidden=bad)


def test_hidden_positions_must_exist_and_leave_something_visible(model):
    tokens = tokenize(model, "dirty quantum plumbing")  # 5 tokens
    with pytest.raises(ValueError, match=r"\(5,\) out of range for 5 tokens"):
        run_model(model, tokens, WhatIf(hidden=(5,)))
    with pytest.raises(ValueError, match="cannot hide all 5 tokens"):
        run_model(model, tokens, WhatIf(hidden=tuple(range(5))))


@pytest.fixture(scope="module")
def money_lpd(model):
    return embed_words(model, MONEY_PROBES)


@pytest.fixture(scope="module")
def river_and_was(model, money_lpd):
    tokens = tokenize(model, RIVER)
    bank = word_pieces(tokens, "bank")
    return {
        word: hide_word(model, RIVER, word_pieces(tokens, word), bank, money_lpd)
        for word in ("river", "was")
    }


def test_nothing_changes_before_the_first_block(river_and_was):
    for effect in river_and_was.values():
        assert effect.cosine_l[0] == pytest.approx(1.0, abs=1e-12)
        assert effect.distance_l[0] == 0.0
        assert effect.watched_word == "bank"


def test_hiding_river_changes_bank_more_than_hiding_was(river_and_was):
    """Measured: 1 - cosine 0.020-0.036 (river) against 0.0002-0.007 (was) after blocks 1-6,
    distance 2.5-3.0 against 0.25-1.7."""
    river, was = river_and_was["river"], river_and_was["was"]
    for state in range(1, 7):
        assert 1 - river.cosine_l[state] > 2 * (1 - was.cosine_l[state]), state
        assert river.distance_l[state] > 1.5 * was.distance_l[state], state
    assert river.most_changed == 6
    assert river.sentence_cosine < was.sentence_cosine


def test_river_keeps_bank_away_from_money(river_and_was):
    """With "river" visible, "bank" is less similar to money words than with it hidden, at every
    block (measured: on average 0.010 to 0.045 less); hiding "was" moves them by under 0.01."""
    river = river_and_was["river"].probe_pull_lp.mean(axis=1)
    was = river_and_was["was"].probe_pull_lp.mean(axis=1)
    assert (river[1:] < -0.005).all() and river[-1] < -0.02, river
    assert (np.abs(was) < 0.01).all(), was
    assert (river[1:] < was[1:]).all()


def test_tokens_and_text_give_the_same_effect(model, river_and_was):
    tokens = tokenize(model, RIVER)
    again = hide_word(model, tokens, (2,), 3)
    np.testing.assert_allclose(again.cosine_l, river_and_was["river"].cosine_l, atol=1e-12)
    assert again.probe_cosine_with_lp.shape == (7, 0)


def test_two_passes_already_run_give_the_same_effect(model, river_and_was, money_lpd):
    # The app takes both passes from its trace store instead of running them again.
    with_word = trace_sentence(model, RIVER)
    without_word = trace_sentence(model, RIVER, WhatIf(hidden=(2,)))
    effect = compare_passes(with_word, without_word, 3, money_lpd)
    expected = river_and_was["river"]
    np.testing.assert_array_equal(effect.cosine_l, expected.cosine_l)
    np.testing.assert_array_equal(effect.probe_cosine_without_lp, expected.probe_cosine_without_lp)
    assert (effect.hidden, effect.watched) == (expected.hidden, expected.watched)
    with pytest.raises(ValueError, match="part of the hidden word"):
        compare_passes(with_word, without_word, 2)
    with pytest.raises(ValueError, match="same tokens"):
        compare_passes(
            with_word, trace_sentence(model, "I made a deposit at the bank", WhatIf(hidden=(2,))), 3
        )


def test_a_word_of_many_pieces_can_be_watched_and_hidden(model):
    tokens = tokenize(model, FOREST)
    effect = hide_word(model, FOREST, word_pieces(tokens, "verdant"), word_pieces(tokens, "roamed"))
    assert (effect.hidden_word, effect.watched_word) == ("verdant", "roamed")
    assert effect.watched == (5, 6) and effect.cosine_l.shape == (7,)
    assert "“verdant”" in effect.summary() and "“roamed”" in effect.summary()


def test_bad_requests_name_the_bad_values(model, money_lpd):
    with pytest.raises(ValueError, match="part of the hidden word"):
        hide_word(model, RIVER, (2, 3), 3)
    with pytest.raises(ValueError, match=r"word_positions must be token positions in \[0, 7\)"):
        hide_word(model, RIVER, (), 3)
    with pytest.raises(ValueError, match="token must be"):
        hide_word(model, RIVER, (2,), 9)
    with pytest.raises(ValueError, match=r"probes_lpd must have shape \(7, p, 384\)"):
        hide_word(model, RIVER, (2,), 3, money_lpd[1:])
    with pytest.raises(ValueError, match="'lake' is not a word of the sentence"):
        word_pieces(tokenize(model, RIVER), "lake")


def test_on_the_decoder_a_hidden_word_changes_only_the_tokens_after_it(smollm2):
    # Causal attention: a token before the hidden word never read it, so its vectors are
    # bit-identical in both passes; a token after it changes. No sentence embedding to compare.
    text = "The river bank was muddy"  # The ▁river ▁bank ▁was ▁muddy
    with_word = trace_sentence(smollm2, text)
    without = trace_sentence(smollm2, text, WhatIf(hidden=(1,)))
    before, after = compare_passes(with_word, without, 0), compare_passes(with_word, without, 2)
    assert before.sentence_cosine is None and before.sentence_distance is None
    np.testing.assert_array_equal(before.distance_l, 0.0)
    assert after.distance_l[1:].min() > 0 and after.distance_l[0] == 0.0  # embeddings equal
