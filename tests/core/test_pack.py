"""attention_core.methods.pack: the header and the raw float32 layer blocks the explorer fetches.

The browser recomputes every stage from these bytes, so they must be the engine's numbers bit for
bit, in the documented shapes and order."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from tokenizers import Tokenizer

from attention_core import trace_rollout, trace_sentence
from attention_core.methods.pack import (
    MAX_TILE,
    block_nbytes,
    header,
    layer_block,
    trace_roles,
    visible_tokens,
)
from attention_core.methods.roles import LABELS, RULE

SENTENCE = "The river bank was muddy after the rain"


@pytest.fixture(scope="module")
def trace(model):
    return trace_sentence(model, SENTENCE)


def decode(data: bytes, shape: tuple[int, ...]) -> np.ndarray:
    return np.frombuffer(data, dtype="<f4").reshape(shape)


def test_header_of_the_decoder(smollm2):
    # SmolLM2-135M: 30 layers, 9 query heads sharing 3 key/value heads of 64, causal; its pieces
    # carry their own spaces and there is no [CLS]/[SEP].
    got = header(trace_sentence(smollm2, "The river bank was muddy"))
    assert {k: got[k] for k in ("n_layers", "n_heads", "d_head", "n_kv_heads", "causal")} == {
        "n_layers": 30,
        "n_heads": 9,
        "d_head": 64,
        "n_kv_heads": 3,
        "causal": True,
    }
    assert got["tokens"] == ["The", "▁river", "▁bank", "▁was", "▁muddy"]
    assert got["special"] == [False] * 5 and got["n_tokens"] == 5
    assert got["kept_hiding_special"] == [0, 1, 2, 3, 4]  # nothing to hide in a decoder


def test_header_fields(model, trace):
    got = header(trace)
    # The model card's sizes, not the config's fields read back: all-MiniLM-L6-v2 is 6 layers of
    # 12 heads of 32, each head its own keys and values, no mask of its own.
    assert {k: got[k] for k in ("n_layers", "n_heads", "d_head", "n_kv_heads", "causal")} == {
        "n_layers": 6,
        "n_heads": 12,
        "d_head": 32,
        "n_kv_heads": 12,
        "causal": False,
    }
    # The pieces and markers are the tokenizer's own (the `tokenizers` library on the model's
    # tokenizer.json, the reference), in order, [CLS] and [SEP] flagged as special.
    reference = Tokenizer.from_file(str(model.path / "tokenizer.json"))
    reference.no_padding()
    encoding = reference.encode(SENTENCE)
    assert got["tokens"] == encoding.tokens
    assert got["special"] == [bool(m) for m in encoding.special_tokens_mask]
    assert got["n_tokens"] == len(encoding.tokens) == 10  # 8 words, [CLS] and [SEP]
    # hiding [CLS]/[SEP] keeps the tokenizer's ordinary pieces, positions 1..8
    kept = [i for i, m in enumerate(encoding.special_tokens_mask) if not m]
    assert got["kept_hiding_special"] == kept == list(range(1, 9))
    # JSON-ready: what the browser receives decodes to the same header (a NumPy int or bool
    # would not serialize at all)
    assert json.loads(json.dumps(got)) == got


ROLE_OF = {label: role for role, label in LABELS.items()}
REPEATED = "the dog saw the dog and the other dog saw the dog too"


def read_badge(badge: str) -> list[tuple[str, float]]:
    """ "induction 0.43" -> [("induction", 0.43)]; "mixed: a 0.41 · b 0.20" -> both."""
    parts = badge.removeprefix("mixed: ").split(" · ")
    return [(ROLE_OF[p.rsplit(" ", 1)[0]], float(p.rsplit(" ", 1)[1])) for p in parts]


@pytest.mark.parametrize("key", ["minilm", "smollm2"])
def test_header_names_every_head_as_the_reference_scores_do(engines, key):
    # The badges against TransformerLens's detector on transformers' attentions: the role named
    # passes the rule on the reference scores, its number is the reference score to 2 decimals.
    from tests.roles_reference import reference_scores

    trace = trace_sentence(engines[key], REPEATED)
    got = header(trace)["roles"]
    ref = reference_scores(key, REPEATED)
    even = trace_roles(trace).even
    assert (len(got), len(got[0])) == (trace.config.n_layers, trace.config.n_heads)
    for layer, row in enumerate(got):
        for head, badge in enumerate(row):
            for role, shown in read_badge(badge):
                assert abs(shown - ref[role][layer, head]) <= 0.005 + 1e-5, (badge, role)
            role, _ = read_badge(badge)[0]
            if not badge.startswith("mixed") and role != "broad":
                assert ref[role][layer, head] >= even[role] + RULE.margin - 1e-5
    kinds = {badge.split(" ")[0] for row in got for badge in row}
    assert "mixed:" in kinds and len(kinds) > 1  # some heads named, some not
    assert json.loads(json.dumps(got)) == got


def test_a_traces_roles_are_scored_once(smollm2):
    trace = trace_sentence(smollm2, "The river bank was muddy")
    assert trace_roles(trace) is trace_roles(trace)
    assert header(trace)["roles"] == header(trace)["roles"]


@pytest.mark.parametrize("layer", range(6))
def test_scores_block_is_the_engines_scores_bit_for_bit(trace, layer):
    block = layer_block(trace, layer, "scores")
    n, h = trace.n_tokens, trace.config.n_heads
    assert (block.layer, block.part) == (layer, "scores")
    assert isinstance(block.data, bytes)
    got = decode(block.data, (h, n, n))
    assert got.dtype == np.dtype("<f4")
    np.testing.assert_array_equal(got, trace.scores_lhqk[layer])
    # bit-exact, not just equal as numbers (-0.0 == 0.0 would pass array_equal)
    assert got.tobytes() == np.ascontiguousarray(trace.scores_lhqk[layer], "<f4").tobytes()
    assert len(block.data) == block_nbytes(n, h, trace.config.d_head, "scores") == 4 * h * n * n


@pytest.mark.parametrize("layer", range(6))
def test_qk_block_is_queries_then_keys_bit_for_bit(trace, layer):
    block = layer_block(trace, layer, "qk")
    n, h, e = trace.n_tokens, trace.config.n_heads, trace.config.d_head
    assert (block.layer, block.part) == (layer, "qk")
    half = 4 * h * n * e
    assert len(block.data) == block_nbytes(n, h, e, "qk") == 2 * half
    q = decode(block.data[:half], (h, n, e))
    k = decode(block.data[half:], (h, n, e))
    np.testing.assert_array_equal(q, trace.q_lhqe[layer])
    np.testing.assert_array_equal(k, trace.k_lhke[layer])
    assert q.tobytes() == np.ascontiguousarray(trace.q_lhqe[layer], "<f4").tobytes()
    assert k.tobytes() == np.ascontiguousarray(trace.k_lhke[layer], "<f4").tobytes()


@pytest.mark.parametrize("key", ["minilm", "smollm2"])
def test_norms_and_rollout_blocks_are_the_engines_bit_for_bit(engines, key):
    """The blocks the norm-weighted and rollout stages draw: the trace's value norms [h, t] and
    its rollout [t, t], as float32 bytes, of the sizes block_nbytes says."""
    trace = trace_sentence(engines[key], SENTENCE)
    n, h, e = trace.n_tokens, trace.config.n_heads, trace.config.d_head
    rollout = trace_rollout(trace)
    for layer in (0, trace.config.n_layers - 1):
        norms = layer_block(trace, layer, "norms").data
        assert len(norms) == block_nbytes(n, h, e, "norms") == 4 * h * n
        assert norms == np.ascontiguousarray(trace.value_norm_lhk[layer], "<f4").tobytes()
        flow = layer_block(trace, layer, "rollout").data
        assert len(flow) == block_nbytes(n, h, e, "rollout") == 4 * n * n
        assert flow == np.ascontiguousarray(rollout[layer], "<f4").tobytes()
        np.testing.assert_allclose(decode(flow, (n, n)).sum(axis=1), 1.0, atol=1e-5)


def test_block_scores_reproduce_q_dot_k(trace):
    # The two parts describe the same head: scores[h, q, k] = q_h[q] · k_h[k] (float32 sums,
    # so to float32 rounding, not bit for bit).
    layer, n, h, e = 3, trace.n_tokens, trace.config.n_heads, trace.config.d_head
    scores = decode(layer_block(trace, layer, "scores").data, (h, n, n))
    qk = np.frombuffer(layer_block(trace, layer, "qk").data, dtype="<f4").reshape(2, h, n, e)
    recomputed = np.einsum("hqe,hke->hqk", qk[0].astype(np.float64), qk[1].astype(np.float64))
    np.testing.assert_allclose(scores, recomputed, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("n_tokens", [1, 3, 12, 512])
@pytest.mark.parametrize("part", ["scores", "qk"])
def test_block_nbytes_formula(n_tokens, part):
    per_head = n_tokens * n_tokens if part == "scores" else 2 * n_tokens * 32
    assert block_nbytes(n_tokens, 12, 32, part) == 4 * 12 * per_head


@pytest.mark.parametrize(("n_tokens", "side"), [(1, 1), (48, 48), (49, 25), (160, 40), (512, 47)])
def test_thumbnail_bytes_formula(n_tokens, side):
    for part in ("thumbs", "thumbs_visible"):
        assert block_nbytes(n_tokens, 12, 32, part) == 4 * 12 * side * side


@pytest.mark.parametrize("layer", [-1, 6, 99])
def test_bad_layer_raises_naming_it(trace, layer):
    with pytest.raises(ValueError, match=rf"layer {layer}\b.*0\.\.5"):
        layer_block(trace, layer, "scores")


@pytest.mark.parametrize("part", ["pattern", "", "SCORES", "q"])
def test_bad_part_raises_naming_it(trace, part):
    with pytest.raises(ValueError, match=re.escape(repr(part))) as err:
        layer_block(trace, 0, part)  # type: ignore[arg-type]
    assert "scores" in str(err.value) and "qk" in str(err.value)


@pytest.mark.parametrize("part", ["thumbs", "thumbs_visible"])
def test_thumbnails_are_the_pooled_patterns_and_rows_still_sum_to_one(model, part):
    long = " ".join(["the river bank was muddy after the rain"] * 20)  # 162 tokens: pooled 4×4
    trace = trace_sentence(model, long)
    keep = visible_tokens(trace.tokens.special_t, part == "thumbs_visible")
    assert keep.size == trace.n_tokens - (2 if part == "thumbs_visible" else 0)
    block = layer_block(trace, 3, part)
    side = -(-keep.size // -(-keep.size // MAX_TILE))
    thumbs = np.frombuffer(block.data, "<f4").reshape(12, side, side)
    assert len(block.data) == block_nbytes(keep.size, 12, 32, part)
    # a plain loop over blocks of f tokens: rows averaged, columns summed
    f = -(-keep.size // MAX_TILE)
    pattern = trace.pattern_lhqk[3][:, keep][:, :, keep].astype(np.float64)
    for h in (0, 7):
        for r in range(side):
            for c in (0, side - 1):
                rows = pattern[h, r * f : (r + 1) * f, c * f : (c + 1) * f]
                assert thumbs[h, r, c] == pytest.approx(rows.sum(axis=1).mean(), abs=1e-6)
    sums = thumbs.sum(axis=-1)
    if part == "thumbs":
        np.testing.assert_allclose(sums, 1.0, atol=1e-5)
    else:  # [CLS]/[SEP] columns left out: a row keeps what it gave the other tokens
        assert (sums < 1).all() and (sums > 0).all()
