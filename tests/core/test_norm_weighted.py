"""Norm-weighted attention (Kobayashi et al. 2020) against transformers' own models.

The reference value norms come from forward hooks on each layer's value projection (BERT's
``attention.self.value`` output, bias included; Llama's ``self_attn.v_proj``, repeated per GQA
group) times each head's columns of the output projection's weight; the reference pattern is
``output_attentions``. Both models, several sentences, and the attention-sink fact the app teaches.
"""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import trace_sentence
from attention_core.methods.norm_weighted import norm_weighted_lhqk, value_norms_hk
from tests.core.oracles import SENTENCES, cli_npz, reference, sink_shares

KEYS = ("minilm", "smollm2")


@pytest.fixture(scope="module", params=[(k, s) for k in KEYS for s in SENTENCES], ids=str)
def pair(request, engines):
    """(our trace, transformers' hooked reference) for one model and sentence."""
    key, name = request.param
    trace = trace_sentence(engines[key], SENTENCES[name])
    ref = reference(key, SENTENCES[name])
    assert trace.tokens.input_ids_t.shape[0] == ref.pattern_lhqk.shape[-1]
    return trace, ref


def test_value_norms_equal_the_hooked_value_projection(pair):
    trace, ref = pair
    ours = np.asarray(trace.value_norm_lhk)
    assert ours.dtype == np.float32
    assert ours.shape == ref.value_norm_lhk.shape == (*ref.pattern_lhqk.shape[:3],)
    top = float(ref.value_norm_lhk.max())
    np.testing.assert_allclose(ours, ref.value_norm_lhk, rtol=1e-4, atol=1e-5 * top)


def test_norm_weighted_equals_pattern_times_the_reference_norms(pair):
    trace, ref = pair
    ours = norm_weighted_lhqk(trace)
    theirs = ref.norm_weighted_lhqk
    assert ours.shape == theirs.shape
    # the pattern agrees to ~1e-5 absolute; norms reach ~200 in SmolLM2: relative to the largest
    top_l = np.abs(theirs).max(axis=(1, 2, 3))
    worst_l = (np.abs(ours - theirs) - 1e-4 * np.abs(theirs)).max(axis=(1, 2, 3)) / top_l
    assert worst_l.max() <= 1e-4, worst_l


def test_value_norms_hk_of_one_layer_equal_the_vectors_norms(pair):
    """The engine's function on the trace's own v and W_O gives the same norms as making the
    [h, k, d] vectors f_h(x_j) and measuring them."""
    trace, ref = pair
    layer = len(ref.value_norm_lhk) // 2
    v_xke = np.asarray(getattr(trace, "v_lgke", trace.v_lhke)[layer])
    w_hed = np.asarray(trace.w_o_lhed[layer])
    repeat = w_hed.shape[0] // v_xke.shape[0]
    f_hkd = np.repeat(v_xke.astype(np.float64), repeat, axis=0) @ w_hed
    direct = np.linalg.norm(f_hkd, axis=-1)
    np.testing.assert_allclose(value_norms_hk(v_xke, w_hed), direct, rtol=1e-5)


# The attention-sink fact, read off the reference: (model, sentence, head, its share of weight on
# the sink tokens, its share of the norm-weighted attention there), queries averaged. MiniLM's
# sinks are [CLS] and [SEP]; SmolLM2's is the first token (its own first query, which can only
# see it, left out).
SINKS = [
    ("minilm", "short", (3, 4), 0.9156, 0.2469),
    ("minilm", "long", (1, 9), 0.6195, 0.1003),
    ("smollm2", "short", (23, 0), 0.8478, 0.2928),
    ("smollm2", "long", (23, 3), 0.6440, 0.2034),
]


def _shares(key: str, pattern_lhqk, weighted_lhqk, layer: int, head: int):
    t = pattern_lhqk.shape[-1]
    sinks, first_q = ([0, t - 1], 0) if key == "minilm" else ([0], 1)
    pattern_hqk = np.asarray(pattern_lhqk[layer])[None, head, first_q:]
    weighted_hqk = np.asarray(weighted_lhqk[layer])[None, head, first_q:]
    by_weight, by_norm = sink_shares(pattern_hqk, weighted_hqk, sinks)
    return float(by_weight[0]), float(by_norm[0])


@pytest.mark.parametrize(("key", "name", "head", "weight", "norm"), SINKS, ids=str)
def test_a_sink_head_looks_at_the_sink_but_moves_little_from_it(
    engines, key, name, head, weight, norm
):
    ref = reference(key, SENTENCES[name])
    theirs = _shares(key, ref.pattern_lhqk, ref.norm_weighted_lhqk, *head)
    assert theirs == pytest.approx((weight, norm), abs=1e-3)
    assert weight > 0.6 and norm < weight / 2.5  # most weight on the sink, a fraction of the norm
    trace = trace_sentence(engines[key], SENTENCES[name])
    ours = _shares(key, trace.pattern_lhqk, norm_weighted_lhqk(trace), *head)
    assert ours == pytest.approx(theirs, abs=1e-4)


@pytest.mark.parametrize("key", KEYS)
def test_the_npz_export_holds_value_norms_and_norm_weighted(key):
    text = SENTENCES["punctuation"]
    npz = cli_npz(key, text)
    ref = reference(key, text)
    n_l, n_h, t, _ = ref.pattern_lhqk.shape
    assert npz["value_norm"].shape == (n_l, n_h, t)
    assert npz["norm_weighted"].shape == (n_l, n_h, t, t)
    top = float(ref.value_norm_lhk.max())
    np.testing.assert_allclose(npz["value_norm"], ref.value_norm_lhk, rtol=1e-4, atol=1e-5 * top)
    theirs = ref.norm_weighted_lhqk
    assert np.abs(npz["norm_weighted"] - theirs).max() <= 1e-4 * np.abs(theirs).max()
    np.testing.assert_allclose(
        npz["norm_weighted"], npz["pattern"] * npz["value_norm"][:, :, None, :], rtol=1e-6
    )
