"""The engine functions that pages used to compute for themselves (issue 13), on the real model:
Build your own head's input and view, the padding demo's tokens, the hide-word page's defaults."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attention_core import BlockConfig, make_block_weights, run_block, trace_sentence
from attention_core.lessons.block import block_input, unit_variance, view_block
from attention_core.lessons.demos import padding_demo
from attention_core.methods.hide_word import default_base, default_choice, words_of
from attention_core.methods.pack import visible_tokens

RIVER = "The river bank was muddy"


@pytest.fixture(scope="module")
def river(model):
    return trace_sentence(model, RIVER)


@pytest.mark.parametrize("hide_special", [False, True])
def test_block_input_is_the_visible_tokens_word_embeddings_at_length_sqrt_d(river, hide_special):
    tokens, x_td = block_input(river, hide_special)
    keep = visible_tokens(river.tokens.special_t, hide_special)
    assert tokens == tuple(river.tokens.tokens[i] for i in keep)
    d = river.config.d_model
    np.testing.assert_allclose(np.linalg.norm(x_td, axis=-1), np.sqrt(d), rtol=1e-5)
    direction = river.word_td[keep] / np.linalg.norm(river.word_td[keep], axis=-1, keepdims=True)
    np.testing.assert_allclose(x_td / np.sqrt(d), direction, atol=1e-6)
    assert np.all(unit_variance(np.zeros((2, 4))) == 0)  # an all-zero row stays zero


@pytest.mark.parametrize("source", ["random", "pretrained"])
@pytest.mark.parametrize("combine", ["sum", "concat"])
def test_view_block_compares_the_two_combinations_as_two_separate_runs_do(
    model, river, source, combine
):
    _, x_td = block_input(river, False)
    cfg = BlockConfig(n_heads=4, d_k=16, source=source, combine=combine, layer=2)
    weights = make_block_weights(cfg, x_td.shape[1], model)
    view = view_block(x_td, cfg, weights)
    shown = run_block(x_td, cfg, weights)
    other = run_block(x_td, replace(cfg, combine="concat" if combine == "sum" else "sum"), weights)
    assert view.combine_gap == pytest.approx(float(np.abs(shown.delta_td - other.delta_td).max()))
    assert 0 <= view.combine_gap < 1e-4 * max(view.delta_max, 1)  # one linear map: rounding
    np.testing.assert_array_equal(view.pattern_hqk, shown.pattern_hqk)
    np.testing.assert_allclose(view.head_norm_ht, np.linalg.norm(shown.head_delta_htd, axis=-1))
    np.testing.assert_allclose(view.delta_norm_t, np.linalg.norm(shown.delta_td, axis=-1))


def test_the_padding_demo_pads_its_tokens_and_stops_at_the_models_length(model, river):
    pad = padding_demo(model, river, 3)
    assert pad.tokens == (*river.tokens.tokens, "[PAD]", "[PAD]", "[PAD]")
    assert pad.free_hqk.shape[-1] == len(pad.tokens)
    long = trace_sentence(model, " ".join(["word"] * 600))  # cut to the model's 512 tokens
    assert padding_demo(model, long, 3).tokens == long.tokens.tokens  # no room: no [PAD]


def test_hide_word_defaults(model, river):
    words = words_of(river.tokens)
    assert list(words) == ["the", "river", "bank", "was", "muddy"]
    assert words["bank"] == (3,)
    # a preset's view (query 3 "bank", key 2 "river"): hide river, watch bank
    assert default_choice(river.tokens, (3, 2)) == ("river", 3)
    # a typed sentence: watch the last real word, hide the first content word
    assert default_choice(river.tokens) == ("river", 5)
    one = trace_sentence(model, "hello")
    assert default_choice(one.tokens) is None  # nothing else to hide
    assert default_base(["river", "the", "was", "muddy"]) == "was"  # the last little word
    assert default_base(["river", "muddy"]) == "muddy"
