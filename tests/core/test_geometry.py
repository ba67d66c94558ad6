"""attention_core.methods.geometry: PCA against NumPy's SVD and scikit-learn, cosine, words from
word pieces, probe parsing, probe embeddings against the engine's own forward pass, and a token's
cosines with the probes relative to their mean, measured on the river and deposit "bank"."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_core import (
    closest_token,
    cosine,
    embed_words,
    fit_pca,
    fit_shift_plane,
    parse_probes,
    shared_words,
    split_words,
    tokenize,
    trace_sentence,
    word_positions,
    word_vectors,
)
from attention_core.methods.geometry import probe_cosines, relative_cosines
from ui.presets import BANK_PROBES

RIVER = "The river bank was muddy"
DEPOSIT = "I made a deposit at the bank"


@pytest.fixture(scope="module")
def cloud():
    rng = np.random.default_rng(7)
    basis = rng.standard_normal((5, 40))
    return rng.standard_normal((60, 5)) * [9.0, 5.0, 2.0, 1.0, 0.5] @ basis + 3.0


def test_pca_matches_numpy_svd_of_the_centred_matrix(cloud):
    pca = fit_pca(cloud, 3)
    centred = cloud - cloud.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    np.testing.assert_allclose(np.abs(pca.components_cd @ vt[:3].T), np.eye(3), atol=1e-10)
    np.testing.assert_allclose(pca.explained_variance_c, s[:3] ** 2 / (len(cloud) - 1))
    np.testing.assert_allclose(pca.explained_ratio_c, s[:3] ** 2 / (s**2).sum())
    # projections are the SVD's U·S columns, up to each component's sign
    proj = pca.transform(cloud)
    np.testing.assert_allclose(np.abs(proj), np.abs(centred @ vt[:3].T), atol=1e-9)


def test_pca_matches_scikit_learn(cloud):
    decomposition = pytest.importorskip("sklearn.decomposition")
    ref = decomposition.PCA(n_components=2, svd_solver="full").fit(cloud)
    pca = fit_pca(cloud, 2)
    np.testing.assert_allclose(pca.explained_variance_c, ref.explained_variance_, rtol=1e-10)
    np.testing.assert_allclose(pca.explained_ratio_c, ref.explained_variance_ratio_, rtol=1e-10)
    signs = np.sign((pca.components_cd * ref.components_).sum(axis=1))
    np.testing.assert_allclose(pca.components_cd, ref.components_ * signs[:, None], atol=1e-10)
    np.testing.assert_allclose(pca.transform(cloud), ref.transform(cloud) * signs, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(3, 12), st.integers(2, 8)),
        elements=st.floats(-100, 100, allow_nan=False, width=32),
    )
)
def test_pca_invariants(x):
    pca = fit_pca(x, 2)
    np.testing.assert_allclose(pca.components_cd @ pca.components_cd.T, np.eye(2), atol=1e-9)
    assert pca.explained_variance_c[0] >= pca.explained_variance_c[1] - 1e-9
    assert 0 <= pca.explained_ratio_c.sum() <= 1 + 1e-9
    proj = pca.transform(x)
    np.testing.assert_allclose(proj.mean(axis=0), 0, atol=1e-6 * (1 + np.abs(x).max()))
    # the projected coordinates are uncorrelated: the two axes are orthogonal directions
    scale = (np.abs(x).max() + 1) ** 2 * len(x)
    assert abs(proj[:, 0] @ proj[:, 1]) <= 1e-8 * scale


def test_pca_rejects_bad_input():
    with pytest.raises(ValueError, match="shape"):
        fit_pca(np.ones((1, 5)), 2)
    with pytest.raises(ValueError, match="NaN"):
        fit_pca(np.array([[0.0, np.nan], [1.0, 2.0], [3.0, 4.0]]), 2)


def test_cosine_broadcasts_and_handles_zero_vectors():
    a = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    b = np.array([[2.0, 0.0], [-1.0, -1.0], [3.0, 4.0]])
    np.testing.assert_allclose(cosine(a, b), [1.0, -1.0, 0.0])
    matrix = cosine(a[:, None], b[None])  # [3,1,2] vs [1,3,2] -> [3,3]
    assert matrix.shape == (3, 3)
    np.testing.assert_allclose(matrix[1, 2], 7 / (np.sqrt(2) * 5))


def test_split_words_merges_pieces_and_skips_specials():
    tokens = ["[CLS]", "the", "river", "mud", "##dy", "##er", ",", "##x", "[SEP]"]
    assert split_words(tokens) == [
        ("the", (1,)),
        ("river", (2,)),
        ("muddyer", (3, 4, 5)),
        (",x", (6, 7)),
    ]
    assert split_words(["[CLS]", "##a", "[SEP]"]) == [("##a", (1,))]


@pytest.mark.parametrize(
    "text",
    [
        "dirty quantum plumbing",
        "The river bank was muddy.",
        "Unbelievably, the caterpillars metamorphosed overnight!",
        "Héllo wörld, ok?",
    ],
)
def test_split_words_rejoins_smollm2_pieces_into_the_texts_words(smollm2, text):
    # Byte-level pieces ("dir" + "ty", "▁quantum") pooled back into words: the text's own words
    # and punctuation, as a plain regular expression finds them.
    pieces = tokenize(smollm2, text).tokens
    words = [word for word, _ in split_words(pieces)]
    assert words == re.findall(r"\w+|[^\w\s]+", text)


def test_shared_words_and_positions_on_real_tokens(model):
    a, b = trace_sentence(model, RIVER), trace_sentence(model, DEPOSIT)
    assert shared_words(a.tokens.tokens, b.tokens.tokens) == ["the", "bank"]
    assert word_positions(a.tokens.tokens, b.tokens.tokens, "bank") == ((3,), (7,))
    with pytest.raises(ValueError, match="not a word of the second"):
        word_positions(a.tokens.tokens, b.tokens.tokens, "river")
    multi = trace_sentence(model, "Wazowski met Wazowski")  # wa ##zow ##ski met wa ##zow ##ski
    other = trace_sentence(model, "Mike Wazowski smiled")
    assert shared_words(multi.tokens.tokens, other.tokens.tokens) == ["wazowski"]
    pos, pos_other = word_positions(multi.tokens.tokens, other.tokens.tokens, "wazowski")
    assert (pos, pos_other) == ((1, 2, 3), (2, 3, 4))  # the first occurrence
    np.testing.assert_allclose(
        word_vectors(multi.hidden_ltd, pos), multi.hidden_ltd[:, 1:4].mean(axis=1), atol=1e-6
    )


def test_parse_probes_drops_bad_items_with_reasons():
    probes, problems = parse_probes(" river , ,water,,RIVER, " + "x" * 41)
    assert probes == ["river", "water"]
    assert len(problems) == 3
    assert any("empty" in p for p in problems)
    assert any("40 characters" in p for p in problems)
    assert any("RIVER" in p for p in problems)
    probes, problems = parse_probes(",".join(f"w{i}" for i in range(15)))
    assert probes == [f"w{i}" for i in range(12)]
    assert problems == ["Only the first 12 probe words are used; 3 more dropped."]
    assert parse_probes("") == ([], [])
    assert parse_probes("money, finance") == (["money", "finance"], [])


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=300))
def test_parse_probes_never_fails_and_respects_the_limits(text):
    probes, problems = parse_probes(text)
    assert len(probes) <= 12 and len(problems) <= 4
    assert all(p and p == p.strip() and len(p) <= 40 and "," not in p for p in probes)
    assert len({p.lower() for p in probes}) == len(probes)


def test_probe_embedding_is_the_word_alone_through_the_model(model):
    vectors = embed_words(model, ["money", "verdant"])
    assert vectors.shape == (7, 2, 384)
    money = trace_sentence(model, "money")
    assert money.tokens.tokens == ("[CLS]", "money", "[SEP]")
    np.testing.assert_allclose(vectors[:, 0], money.hidden_ltd[:, 1], rtol=1e-6)
    verdant = trace_sentence(model, "verdant")  # ve ##rdan ##t: the mean of three pieces
    assert verdant.n_tokens == 5
    np.testing.assert_allclose(vectors[:, 1], verdant.hidden_ltd[:, 1:-1].mean(axis=1), atol=1e-6)
    assert embed_words(model, []).shape == (7, 0, 384)


def test_shift_plane_is_one_fit_over_all_layers_and_probes(model):
    trace = trace_sentence(model, RIVER)
    probes = embed_words(model, ["river", "money"])
    keep = np.arange(1, trace.n_tokens - 1)
    pca, tokens_lt2, probes_lp2 = fit_shift_plane(trace.hidden_ltd, keep, probes)
    rows = np.concatenate([trace.hidden_ltd[:, keep].reshape(-1, 384), probes.reshape(-1, 384)])
    ref = fit_pca(rows)
    np.testing.assert_allclose(pca.components_cd, ref.components_cd)
    assert tokens_lt2.shape == (7, 5, 2) and probes_lp2.shape == (7, 2, 2)
    np.testing.assert_allclose(tokens_lt2[4], ref.transform(trace.hidden_ltd[4, keep]), atol=1e-9)


def test_closest_token_skips_probe_words_and_specials(model):
    trace = trace_sentence(model, RIVER)
    probe_words = ["river", "water", "money", "finance"]
    probes = embed_words(model, probe_words)
    assert closest_token(trace.tokens.tokens, trace.hidden_ltd[0], probes[0], probe_words) == 3
    assert closest_token(trace.tokens.tokens, trace.hidden_ltd[0], probes[0, :0], []) == 1


@settings(max_examples=60, deadline=None)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 7), st.integers(1, 6)),
        elements=st.floats(-1, 1, allow_nan=False),
    ),
    arrays(np.float64, 7, elements=st.floats(-1, 1, allow_nan=False)),
)
def test_relative_cosines_ignore_a_shift_shared_by_every_probe(cos_lp, shift):
    shifted = cos_lp + shift[: len(cos_lp), None]  # the same drift for every probe at a state
    np.testing.assert_allclose(relative_cosines(shifted), relative_cosines(cos_lp), atol=1e-12)
    np.testing.assert_allclose(relative_cosines(cos_lp).sum(axis=1), 0, atol=1e-12)
    order = np.arange(cos_lp.shape[1])[::-1]  # the probes' order does not matter
    np.testing.assert_allclose(
        relative_cosines(cos_lp[:, order]), relative_cosines(cos_lp)[:, order], atol=1e-12
    )


def test_relative_cosines_of_one_probe_or_none():
    np.testing.assert_array_equal(relative_cosines(np.array([[0.3], [0.7]])), [[0.0], [0.0]])
    assert relative_cosines(np.zeros((7, 0))).shape == (7, 0)


def test_probe_cosines_against_cosine_state_by_state(model):
    trace = trace_sentence(model, RIVER)
    probes = embed_words(model, list(BANK_PROBES))
    result = probe_cosines(trace.hidden_ltd[:, 3], probes)
    for state in range(7):
        np.testing.assert_allclose(
            result.raw_lp[state], cosine(trace.hidden_ltd[state, 3], probes[state])
        )
    np.testing.assert_allclose(result.mean_l, result.raw_lp.mean(axis=1))
    np.testing.assert_allclose(result.relative_lp, result.raw_lp - result.mean_l[:, None])
    np.testing.assert_allclose(result.change(3), result.relative_lp[3] - result.relative_lp[0])
    assert not result.change(0).any()
    empty = probe_cosines(trace.hidden_ltd[:, 3], probes[:, :0])
    assert empty.raw_lp.shape == empty.relative_lp.shape == (7, 0)
    np.testing.assert_array_equal(empty.mean_l, np.zeros(7))
    with pytest.raises(ValueError, match=r"\(6, 384\) must be \[l, d\]"):
        probe_cosines(trace.hidden_ltd[:6, 3], probes)


def _sense_gap(model, sentence, position):
    """Relative cosine of "bank" with the river probes minus the money probes, per state."""
    trace = trace_sentence(model, sentence)
    assert trace.tokens.tokens[position] == "bank"
    probes = embed_words(model, list(BANK_PROBES))  # shore, stream | money, finance
    result = probe_cosines(trace.hidden_ltd[:, position], probes)
    return result, result.relative_lp[:, :2].mean(axis=1) - result.relative_lp[:, 2:].mean(axis=1)


def test_raw_cosines_rise_together_so_they_mislead(model):
    river, _ = _sense_gap(model, RIVER, 3)
    # after layers 0-4 "bank" is nearer every probe than its embedding was, money included:
    # the probes move too, so raw bars all grow whatever the context
    assert (river.raw_lp[1:6] > river.raw_lp[0] + 0.05).all()
    assert river.mean_l[3] - river.mean_l[0] > 0.1  # measured 0.232 -> 0.384 after layer 2


def test_river_bank_moves_towards_shore_and_stream_relative_to_money(model):
    _, river = _sense_gap(model, RIVER, 3)
    _, deposit = _sense_gap(model, DEPOSIT, 7)
    # the embeddings of "bank" differ only by position: the same gap, about -0.215
    assert abs(river[0] - deposit[0]) < 0.01 and -0.25 < river[0] < -0.18
    # after layers 0-4 river context pulls "bank" towards shore/stream, relative to
    # money/finance (measured +0.08 to +0.14); after layer 5 it is back near the start (+0.007)
    assert (river[1:6] - river[0] > 0.05).all()
    assert abs(river[6] - river[0]) < 0.03
    # money/finance stay nearer at every state: the shift is a lean, not a switch of sense
    assert (river < -0.05).all()
    # the deposit sentence leans the other way after layers 2-5 (measured -0.05 to -0.14)
    assert (deposit[3:] - deposit[0] < -0.03).all()
    # at every state after the embedding, the river sentence puts "bank" nearer shore/stream,
    # relative to money/finance, than the deposit sentence does (measured 0.07 to 0.16)
    assert (river[1:] - deposit[1:] > 0.05).all()
