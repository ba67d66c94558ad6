"""Map mode (attention_core.methods.pack_map): a long SmolLM2 sentence's head, pooled to the
screen ("map") and cut into full-resolution windows ("tile"), against transformers' eager
attention of the same layer (hooked alone: every layer's weights at 700 tokens are 530 MB).

The pooled cells are checked against plain loops over transformers' pattern blocks (the mean and
the max over the cells the causal mask keeps), the tiles cell for cell; bad requests are refused
with a sentence before any work."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attention_core import trace_sentence
from attention_core.core.functional import attention_steps
from attention_core.methods.pack import MAP_PARTS, block_nbytes, header, layer_block
from attention_core.methods.pack_map import (
    MAP_FROM,
    MAP_SIDE,
    TILE,
    head_block,
    head_request,
    map_shape,
)
from attention_core.methods.rollout import trace_rollout_pooled
from references.text import llama_oracle

LAYER, HEAD = 3, 2
N = 700  # past MAP_FROM: explored as a map
TEXT = " ".join(
    f"Line {i}: the river bank near mill {i % 7} was muddy after the rain, "
    f"and the miller counted {i * 3} sacks."
    for i in range(30)
)
TRAINED = {"scale": True, "temp": 1.0, "causal": True}


@pytest.fixture(scope="module")
def trace(smollm2):
    return trace_sentence(smollm2, TEXT, max_tokens=N)


@pytest.fixture(scope="module")
def theirs(trace):
    """transformers' eager pattern of LAYER, [h, t, t], on the engine's token ids."""
    import torch

    oracle = llama_oracle()
    got = {}
    hook = oracle.layers[LAYER].self_attn.register_forward_hook(
        lambda _mod, _args, out: got.__setitem__("weights", out[1])
    )
    try:
        with torch.no_grad():
            oracle.model(torch.tensor([trace.tokens.input_ids_t.tolist()]))
    finally:
        hook.remove()
    return got["weights"][0].numpy()


def ask(trace, part, window, stage="pattern", settings=TRAINED, head=HEAD):
    fields = {"part": part, "layer": LAYER, "head": head, "stage": stage}
    req = head_request(fields | {"settings": settings, "window": window})
    data = head_block(trace, req)
    shape = (2, *map_shape(req.window)) if part == "map" else (window[1] - window[0], -1)
    return np.frombuffer(data, "<f4").reshape(shape)


def test_the_header_of_a_long_sentence_names_its_map_and_leaves_roles_for_later(trace):
    assert trace.n_tokens == N > MAP_FROM
    got = header(trace)
    assert got["map"] == {"from": MAP_FROM, "side": MAP_SIDE, "tile": TILE} and "roles" not in got
    roles = json.loads(layer_block(trace, 0, "roles").data)
    assert len(roles) == 30 and all(len(row) == 9 for row in roles)


@pytest.mark.parametrize("window", [[0, 256, 0, 256], [256, 512, 0, 256], [512, 700, 444, 700]])
def test_a_tile_is_transformers_pattern(trace, theirs, window):
    r0, r1, c0, c1 = window
    got = ask(trace, "tile", window)
    assert got.shape == (r1 - r0, c1 - c0)
    np.testing.assert_allclose(got, theirs[HEAD, r0:r1, c0:c1], atol=1e-5, rtol=0)


def blocks(pattern_qk, block, reduce):
    """Plain loops: each block × block square's mean or max over the cells a query may see."""
    n = pattern_qk.shape[0]
    side = -(-n // block)
    out = np.full((side, side), -np.inf)
    for i in range(side):
        for j in range(side):
            rows = range(i * block, min(n, (i + 1) * block))
            kept = [
                pattern_qk[q, k]
                for q in rows
                for k in range(j * block, min(n, (j + 1) * block))
                if k <= q
            ]
            if kept:
                out[i, j] = reduce(kept)
    return out


def test_the_map_is_the_mean_and_max_of_transformers_blocks(trace, theirs):
    got = ask(trace, "map", [0, N, 0, N])
    block = -(-N // MAP_SIDE)
    assert got.shape == (2, -(-N // block), -(-N // block)) and block == 2
    np.testing.assert_allclose(got[0], blocks(theirs[HEAD], block, np.mean), atol=1e-5, rtol=0)
    np.testing.assert_allclose(got[1], blocks(theirs[HEAD], block, max), atol=1e-5, rtol=0)
    assert np.isneginf(got[0][0, 1])  # the first queries see no later key: a blank cell


def test_a_window_is_pooled_at_its_own_block(trace, theirs):
    got = ask(trace, "map", [100, 400, 50, 650])  # 600 columns: blocks of 2
    window = theirs[HEAD, 100:400, 50:650]
    expect = window.reshape(150, 2, 300, 2).max(axis=(1, 3))
    expect[expect == 0] = -np.inf  # the blocks wholly above the diagonal keep nothing
    allowed = np.tril(np.ones((N, N), bool))[100:400, 50:650].reshape(150, 2, 300, 2).any((1, 3))
    np.testing.assert_allclose(got[1][allowed], expect[allowed], atol=1e-5, rtol=0)
    assert np.isneginf(got[1][~allowed]).all()


def test_switches_are_applied_on_the_server(trace):
    # √d_k off, temperature 2: the engine's own stages of the head's raw scores.
    settings = {"scale": False, "temp": 2.0, "causal": True}
    got = ask(trace, "tile", [256, 512, 0, 256], "pattern", settings)
    scores = np.asarray(trace.scores_lhqk[LAYER, HEAD])
    steps = attention_steps(scores, 64, scale=False, temperature=2.0, causal=True)
    np.testing.assert_array_equal(got, steps.pattern[256:512, :256])
    masked = ask(trace, "tile", [0, 256, 0, 256], "masked", settings)
    assert np.isneginf(masked[0, 1]) and masked[1, 0] == steps.masked[1, 0]


def test_sizes(trace):
    assert block_nbytes(N, 9, 64, "map") == 8 * 350 * 350
    assert block_nbytes(N, 9, 64, "tile") == 4 * TILE * TILE
    assert len(head_block(trace, head_request(good(part="tile")))) == 4 * TILE * TILE


def good(**changes):
    fields = {"part": "map", "layer": 1, "head": 0, "stage": "pattern", "settings": TRAINED}
    return fields | {"window": [0, TILE, 0, TILE]} | changes


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"part": "scores"}, "part"),
        ({"layer": "1"}, "whole numbers"),
        ({"head": True}, "whole numbers"),
        ({"stage": "qk"}, "stage"),
        ({"settings": {"scale": True}}, "settings"),
        ({"settings": TRAINED | {"temp": 9.0}}, "temperature"),
        ({"settings": TRAINED | {"temp": float("nan")}}, "temperature"),
        ({"settings": TRAINED | {"scale": 1}}, "true or false"),
        ({"window": [0, 10, 5]}, "window"),
        ({"window": [10, 10, 0, 5]}, "not inside"),
        ({"window": [-1, 10, 0, 5]}, "not inside"),
        ({"part": "tile", "window": [0, TILE + 1, 0, 5]}, f"more than {TILE}"),
    ],
)
def test_bad_requests_are_refused_before_any_work(changes, says):
    with pytest.raises(ValueError, match=says):
        head_request(good(**changes))


def test_bad_requests_against_the_sentence(trace):
    for fields in (good(window=[0, N + 1, 0, 5]), good(layer=30), good(head=9)):
        with pytest.raises(ValueError):
            head_block(trace, head_request(fields))
    assert set(MAP_PARTS) == {"map", "tile"}


def test_a_signed_stage_is_pooled_over_the_cells_the_mask_keeps(trace):
    # The masked stage is -inf where hidden: a block's mean and max leave those cells out.
    got = ask(trace, "map", [0, N, 0, N], "masked")
    steps = attention_steps(np.asarray(trace.scores_lhqk[LAYER, HEAD]), 64, causal=True)
    masked = steps.masked.astype(np.float64)
    np.testing.assert_allclose(got[0], blocks(masked, 2, np.mean), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got[1], blocks(masked, 2, max).astype(np.float32))


def test_a_long_rollout_is_the_engines_pooled_one_whole_only(trace):
    held = trace_rollout_pooled(trace)  # block means over the whole text, past 512 tokens
    assert held.block == 2
    got = ask(trace, "map", [0, N, 0, N], "rollout")
    np.testing.assert_array_equal(got[0], held.rollout_lqk[LAYER])
    assert np.isnan(got[1]).all()  # its max is not kept
    with pytest.raises(ValueError, match="ask for the whole map"):
        ask(trace, "tile", [0, 256, 0, 256], "rollout")
