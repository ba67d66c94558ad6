"""Head roles against TransformerLens's head detector on transformers' own attentions.

The oracle: transformers' models (BertModel on the packaged MiniLM folder, LlamaForCausalLM from
SmolLM2's GGUF, eager attention; tests/core/oracles.py) run on the same token ids with
``output_attentions=True``, and TransformerLens's ``head_detector`` functions applied to those
patterns: its three detection patterns and ``compute_head_attention_similarity_score`` (error
measure "mul", nothing excluded). The pattern-only roles are written here in torch from the same
attentions, independently of the engine: ``first_token`` the mean of column 0, ``last_token`` of
the last column (MiniLM's [SEP]), ``self`` the mean of the diagonal, ``broad`` each row's entropy
over log(the keys that row may see: every unhidden key for MiniLM, those up to the query's own for
SmolLM2), averaged over rows that see at least 2 keys. Everything to 1e-5 absolute.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
hd = pytest.importorskip("transformer_lens.head_detector")

from attention_core import WhatIf, run_model, trace_sentence  # noqa: E402
from attention_core.methods.induction import probe_tokens  # noqa: E402
from attention_core.methods.roles import NAMED, RULE, name_heads, role_scores  # noqa: E402
from tests.core.oracles import oracle, reference  # noqa: E402
from tests.core.sentences import SENTENCES as VARIED  # noqa: E402
from tests.roles_reference import detector_scores, pattern_scores  # noqa: E402

TOL = 1e-5
CAUSAL = {"minilm": False, "smollm2": True}
TEXTS = {
    **{name: VARIED[name] for name in ("plain", "punctuation", "digits", "accents", "emoji")},
    "repeated": "the dog saw the dog and the other dog saw the dog too",
    "twice": (
        "The old miller counted seven sacks of grain before sunrise. "
        "The old miller counted seven sacks of grain before sunrise."
    ),
}
CASES = [(key, name) for key in CAUSAL for name in TEXTS]


def visible_count_q(n: int, causal: bool, mask_k: np.ndarray | None = None) -> torch.Tensor:
    """How many keys each query may see: those up to itself (causal) or all, minus hidden."""
    seen = torch.ones(n, n, dtype=torch.float64)
    if causal:
        seen = torch.tril(seen)
    if mask_k is not None:
        seen = seen * torch.from_numpy(mask_k.astype(np.float64))[None, :]
    return seen.sum(-1)


def reference_roles(
    pattern_lhqk: np.ndarray, ids: list[int], count_q: torch.Tensor, closing: bool
) -> dict[str, np.ndarray]:
    """Every role's score [L, H]: TransformerLens's detector for the token jobs, torch for
    the rest (``tests.roles_reference``), over the keys ``count_q`` says each query sees."""
    return detector_scores(pattern_lhqk, ids) | pattern_scores(
        pattern_lhqk, False, closing, count_q
    )


def even_pattern(n: int, causal: bool, mask_k: np.ndarray | None = None) -> np.ndarray:
    """[1, 1, q, k] weight spread evenly over the keys each query may see."""
    seen = np.tril(np.ones((n, n))) if causal else np.ones((n, n))
    if mask_k is not None:
        seen = seen * mask_k[None, :]
    return (seen / np.maximum(seen.sum(-1, keepdims=True), 1))[None, None]


@dataclass(frozen=True)
class Case:
    key: str
    ours: object  # RoleScores
    ref: dict[str, np.ndarray]  # role -> [L, H]
    ref_even: dict[str, float]  # role -> an even spread's score by the same reference


def make_case(key: str, pattern_lhqk, ids: list[int], trace, mask_k=None) -> Case:
    assert trace.tokens.input_ids_t.tolist() == ids
    n, causal, closing = len(ids), CAUSAL[key], key == "minilm"
    count_q = visible_count_q(n, causal, mask_k)
    ref = reference_roles(pattern_lhqk, ids, count_q, closing)
    even = reference_roles(even_pattern(n, causal, mask_k), ids, count_q, closing)
    return Case(key, role_scores(trace), ref, {r: float(v[0, 0]) for r, v in even.items()})


@pytest.fixture(scope="module", params=CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def case(request, engines) -> Case:
    key, name = request.param
    text = TEXTS[name]
    ref = reference(key, text)
    trace = trace_sentence(engines[key], text)
    return make_case(key, ref.pattern_lhqk, oracle(key).ids(text), trace)


def assert_scores_equal(case: Case) -> None:
    expected = {"previous_token", "duplicate_token", "induction", "first_token", "self", "broad"}
    if case.key == "minilm":
        expected.add("last_token")
    assert set(case.ours.scores_lh) == expected
    for role, ref_lh in case.ref.items():
        ours = case.ours.scores_lh[role]
        assert ours.shape == ref_lh.shape, role
        np.testing.assert_allclose(ours, ref_lh, rtol=0, atol=TOL, equal_nan=True, err_msg=role)
    for role, value in case.ref_even.items():
        np.testing.assert_allclose(case.ours.even[role], value, rtol=0, atol=TOL, err_msg=role)


def test_scores_equal_transformer_lens_on_transformers_attentions(case):
    assert_scores_equal(case)


def test_repeats_make_duplicate_and_induction_scores():
    """Not vacuous: on a sentence said twice some heads look at the earlier copy. Measured on
    "twice" (reference scores, largest head; an even spread in brackets): SmolLM2 duplicate 0.36
    (0.02), induction 0.34 (0.02); MiniLM duplicate 0.31 (0.02), induction 0.034 (0.019): the
    small encoder has no induction head."""
    text = TEXTS["twice"]
    for key, floor in (("smollm2", 0.25), ("minilm", 0.0)):
        ids = oracle(key).ids(text)
        count_q = visible_count_q(len(ids), CAUSAL[key])
        scores = reference_roles(reference(key, text).pattern_lhqk, ids, count_q, False)
        even = reference_roles(even_pattern(len(ids), CAUSAL[key]), ids, count_q, False)
        assert scores["duplicate_token"].max() > 0.25, key
        assert scores["duplicate_token"].max() > 10 * even["duplicate_token"].max(), key
        assert scores["induction"].max() > max(floor, even["induction"].max()), key


def reference_name(case: Case, layer: int, head: int) -> str | None:
    """The rule applied to the reference scores: the largest passing job, else a passing sink,
    else broad, else mixed; None when a score sits within the tolerance of a threshold."""
    own = {role: float(v[layer, head]) for role, v in case.ref.items()}
    even = case.ref_even
    near = [abs(own[r] - RULE.needs(even[r])) for r in NAMED if r in own]
    if min(near) <= TOL or abs(own["broad"] - RULE.broad_floor) <= TOL:
        return None
    passing = [r for r in NAMED if r in own and own[r] >= even[r] + RULE.margin]
    jobs = [r for r in passing if r not in ("first_token", "last_token")]
    for group in (jobs, [r for r in passing if r not in jobs]):
        if group:
            return max(group, key=lambda r: own[r])
    return "broad" if own["broad"] >= RULE.broad_floor else "mixed"


def test_names_follow_the_rule_on_the_reference_scores(case):
    names = name_heads(case.ours)
    n_layers, n_heads = case.ref["self"].shape
    assert (len(names), len(names[0])) == (n_layers, n_heads)
    for layer in range(n_layers):
        for head in range(n_heads):
            named = names[layer][head]
            assert (named.layer, named.head) == (layer, head)
            expected = reference_name(case, layer, head)
            if expected is not None:
                assert named.role == expected, (layer, head, named, expected)
            top_ref = sorted(case.ref[r][layer, head] for r in NAMED if r in case.ref)[::-1]
            np.testing.assert_allclose([s for _, s in named.top], top_ref[:2], atol=TOL)
            for role, score in named.top:
                assert abs(case.ref[role][layer, head] - score) <= TOL
            if named.named and named.role != "broad":
                assert named.score >= case.ref_even[named.role] + RULE.margin - TOL


def test_some_heads_are_named_and_some_mixed(case):
    """The rule separates: across a model's heads both kinds occur on ordinary sentences."""
    roles = {h.role for row in name_heads(case.ours) for h in row}
    assert "mixed" in roles or len(roles) > 1


@pytest.mark.parametrize("text", ["Hi", "Hi there"])
def test_one_and_two_tokens_on_the_decoder(smollm2, text):
    ref = reference("smollm2", text)
    ids = oracle("smollm2").ids(text)
    assert len(ids) == len(text.split())
    case = make_case("smollm2", ref.pattern_lhqk, ids, trace_sentence(smollm2, text))
    assert_scores_equal(case)
    if len(ids) == 1:  # one key: no row can spread (broad undefined), every weight on itself
        assert np.isnan(case.ours.scores_lh["broad"]).all()
        np.testing.assert_allclose(case.ours.scores_lh["self"], 1, atol=TOL)
    names = name_heads(case.ours)  # named or not, every head gets a name without error
    assert all(h.role for row in names for h in row)


def test_two_and_three_tokens_on_the_encoder(model):
    """[CLS] [SEP] alone (no text can give it: the probe's wrapping of no tokens), and one word."""
    tokens, _ = probe_tokens(model, np.zeros(0, np.int64))
    for trace in (run_model(model, tokens), trace_sentence(model, "a")):
        ids = trace.tokens.input_ids_t.tolist()
        ref = oracle("minilm")
        with torch.no_grad():
            out = ref.model(input_ids=torch.as_tensor([ids]), output_attentions=True)
        pattern = np.stack([a[0].numpy() for a in out.attentions])
        assert_scores_equal(make_case("minilm", pattern, ids, trace))


def masked_pattern(key: str, ids: list[int], mask_k: np.ndarray) -> np.ndarray:
    """transformers' attentions with ``attention_mask`` 0 at the hidden positions."""
    ref = oracle(key)
    with torch.no_grad():
        out = ref.model(
            input_ids=torch.as_tensor([ids]),
            attention_mask=torch.from_numpy(mask_k.astype(np.int64))[None],
            output_attentions=True,
        )
    return np.stack([a[0].numpy() for a in out.attentions])


@pytest.mark.parametrize(
    ("key", "text", "hidden"),
    [
        ("minilm", "The river bank was muddy", (2,)),
        ("minilm", TEXTS["twice"], (3, 4, 14)),
        ("smollm2", "The river bank was muddy", (2,)),
        ("smollm2", TEXTS["twice"], (3, 4, 14)),
        ("smollm2", "The cat sat.", (0,)),
    ],
)
def test_a_hidden_word_shrinks_the_visible_keys(engines, key, text, hidden):
    trace = trace_sentence(engines[key], text, WhatIf(hidden=hidden))
    ids = trace.tokens.input_ids_t.tolist()
    mask_k = np.ones(len(ids), bool)
    mask_k[list(hidden)] = False
    pattern = masked_pattern(key, ids, mask_k)
    # A decoder's first token hidden leaves its own row no key to see: transformers' softmax
    # then spreads that row over the masked keys, the engine gives it zeros (its stated
    # convention, tests/core/test_edge_numerics.py); the reference row is the engine's
    # convention, every other row transformers' own.
    blind_q = visible_count_q(len(ids), CAUSAL[key], mask_k).numpy() == 0
    pattern[..., blind_q, :] = 0
    case = make_case(key, pattern, ids, trace, mask_k)
    assert_scores_equal(case)
    assert (np.asarray(trace.pattern_lhqk)[..., ~mask_k] == 0).all()
    if key == "minilm":  # the even spread is over fewer keys: n - hidden of them on every row
        seen = len(ids) - len(hidden)
        np.testing.assert_allclose(case.ours.even["first_token"], 1 / seen, atol=TOL)
