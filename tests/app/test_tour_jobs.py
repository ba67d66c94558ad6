"""The tour's "Heads have jobs" step against the reference libraries: the role map and the count
per job on the visitor's sentence (TransformerLens's detector on transformers' attentions, the
stated rule), and the induction probe on SmolLM2 (transformers' LlamaForCausalLM from the GGUF on
the probe's ids: its cross-entropy per token, its attentions scored by TransformerLens, and the
same model with the top induction heads' outputs zeroed for the what-if). Nothing is typed in:
the probe's ids are drawn here as the step says it draws them."""

from __future__ import annotations

import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from attention_core.methods.roles import LABELS  # noqa: E402
from tests.app.conftest import engineers_text, learner_texts, open_page  # noqa: E402
from tests.core.oracles import oracle, run_reference  # noqa: E402
from tests.figdata import array, spec  # noqa: E402
from tests.roles_reference import detector_scores, reference_role  # noqa: E402
from ui import tour  # noqa: E402

STEP = tour.ORDER.index("jobs") + 1
SENTENCE = "the cat saw the dog near the bank"
N, SEED, LOW = 50, 0, 1000  # the probe as the step's engineers' section states it
K = 5  # heads switched off in the what-if


@pytest.fixture(scope="module")
def at():
    page = open_page("learn", s=SENTENCE, step=str(STEP))
    assert not page.exception, [e.value for e in page.exception]
    return page


@pytest.fixture(scope="module")
def ref():
    """The probe through transformers: ids, per-token loss, induction scores, knocked-out loss."""
    ora = oracle("smollm2")
    vocab = ora.model.config.vocab_size
    once = np.random.default_rng(SEED).integers(LOW, vocab, size=N)
    ids = np.concatenate([once, once]).tolist()
    intact = run_reference(ora, ids)
    induction_lh = detector_scores(intact.pattern_lhqk, ids)["induction"]
    flat = np.argsort(-induction_lh, axis=None, kind="stable")[:K]
    top = [(int(i) // induction_lh.shape[1], int(i) % induction_lh.shape[1]) for i in flat]
    knocked = run_reference(ora, ids, top)
    return {
        "ids": ids,
        "loss": cross_entropy(intact.probs_tv, ids),
        "knocked": cross_entropy(knocked.probs_tv, ids),
        "induction_lh": induction_lh,
        "top": top,
        "pattern_lhqk": intact.pattern_lhqk,
    }


def cross_entropy(probs_tv: np.ndarray, ids: list[int]) -> np.ndarray:
    """−log p of each token given those before it, [2n], NaN at 0 (torch's cross-entropy on the
    log of the oracle's float64 probabilities)."""
    logp = torch.log(torch.from_numpy(probs_tv[:-1]))
    loss = torch.nn.functional.nll_loss(logp, torch.as_tensor(ids[1:]), reduction="none")
    return np.concatenate([[np.nan], loss.numpy()])


def _chart(at, key: str) -> dict:
    [chart] = [c for c in at.get("plotly_chart") if c.proto.id.endswith(key)]
    return spec(chart)


def _words(at) -> str:
    return " ".join(learner_texts(at.main))


def test_the_step_follows_the_heads_step_and_links_to_all_heads(at):
    assert tour.ORDER[tour.ORDER.index("heads") + 1] == "jobs"
    assert at.header[0].value == f"{STEP}. Heads have jobs"
    links = [link.proto for link in at.get("page_link")]
    assert any(link.page == "all_heads" for link in links)


def test_the_small_role_map_and_the_counts_follow_the_rule_on_the_reference(at):
    fig = _chart(at, "learn_jobs_map")
    z_lh = array(fig["data"][0]["z"])
    assert z_lh.shape == (6, 12) and not np.isnan(z_lh).any()  # each head drawn
    lines = next(m.value for m in at.markdown if m.value.startswith("- "))
    said = {
        label: int(n) for label, n in re.findall(r"^- (.+?): \*\*(\d+)\*\* heads?", lines, re.M)
    }
    assert sum(said.values()) == 72
    expected = [reference_role("minilm", SENTENCE, la, h) for la in range(6) for h in range(12)]
    known = [e[0] for e in expected if e is not None]
    assert len(known) >= 60
    for role in set(known):
        assert said[LABELS[role]] >= known.count(role)
    assert sum(said.values()) - sum(said[LABELS[r]] for r in set(known)) <= 72 - len(known)


def test_the_top_induction_head_and_its_stripe_are_the_references(at, ref):
    layer, head = ref["top"][0]
    words = _words(at)
    score = ref["induction_lh"][layer, head]
    assert f"**layer {layer}, head {head}**: its induction score is **{score:.2f}**" in words
    pattern = ref["pattern_lhqk"][layer, head]
    fig = _chart(at, "learn_jobs_probe")
    np.testing.assert_allclose(array(fig["data"][0]["z"]), pattern, atol=1e-5)
    query = np.arange(N, 2 * N)
    stripe = pattern[query, query - N + 1].mean()  # query i reads key i − n + 1
    assert f"on average **{stripe:.0%}** of its weight" in words
    assert stripe > 0.5  # a real stripe, not a faint one


def test_the_loss_of_each_copy_and_the_what_if_are_the_references(at, ref):
    fig = _chart(at, "learn_jobs_loss")
    first, second, knocked = (array(d["y"]) for d in fig["data"])
    np.testing.assert_allclose(first, ref["loss"][:N], atol=2e-3, equal_nan=True)
    np.testing.assert_allclose(second, ref["loss"][N:], atol=2e-3)
    np.testing.assert_allclose(knocked, ref["knocked"][N:], atol=2e-3)
    words = _words(at)
    mean_first, mean_second = np.nanmean(ref["loss"][:N]), ref["loss"][N:].mean()
    mean_knocked = ref["knocked"][N:].mean()
    said = f"**{mean_first:.1f}** on the first copy and **{mean_second:.1f}** on the second"
    assert said in words
    assert mean_first > 2 * mean_second and mean_knocked > 2 * mean_second
    heads = ", ".join(f"layer {la} head {h}" for la, h in ref["top"])
    assert (
        f"with the {K} heads that score highest for induction switched off ({heads}), the "
        f"second copy's loss rises from **{mean_second:.1f}** to **{mean_knocked:.1f}**"
    ) in words
    assert "What-if" in words


def test_engineers_details_stay_in_the_closed_expander(at, ref):
    learner = _words(at)
    for code in ("seed", "run_probe", "head_detector", "default_rng", "WhatIf"):
        assert code not in learner
    details = engineers_text(at)
    assert f"seed={SEED}" in details and "error measure" in details
    assert str(ref["ids"][:8]) in details
    assert not at.expander[0].proto.expanded
