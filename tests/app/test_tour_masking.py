"""The tour's masking step: the causal mask shown for real on SmolLM2 (a decoder trained with
it: exact zeros above the diagonal), on MiniLM only as a named what-if, and the padding mask."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import trace_sentence
from tests.app.conftest import engineers_text, open_page
from tests.figdata import array, spec
from tests.roles_reference import reference_scores
from ui import tour

STEP = tour.ORDER.index("masking") + 1


def _chart(at, key: str):
    [chart] = [c for c in at.get("plotly_chart") if c.proto.id.endswith(key)]
    return chart


@pytest.mark.parametrize("text", ["she deposited cash at the bank before noon", "dirty quantum"])
def test_the_real_mask_is_smollm2s(smollm2, text):
    at = open_page("learn", s=text, step=str(STEP))
    assert not at.exception, [e.value for e in at.exception]
    dec = trace_sentence(smollm2, text)
    share = reference_scores("smollm2", text)["previous_token"]  # TransformerLens's score
    layer, head = np.unravel_index(int(np.argmax(share)), share.shape)
    pattern = dec.pattern_lhqk[layer, head]
    shown = array(spec(_chart(at, "learn_mask_real"))["data"][0]["z"])
    np.testing.assert_allclose(shown, pattern, atol=1e-6)
    assert np.all(pattern[np.triu_indices(dec.n_tokens, 1)] == 0)  # "exactly 0"
    assert pattern[0, 0] == pytest.approx(1.0)
    words = " ".join(m.value for m in at.markdown)
    assert f"(its layer {layer}, head {head}:" in words
    assert f"just before, {share[layer, head]:.0%} of its weight;" in words
    assert "every weight above the diagonal is **exactly 0**" in words
    assert f"its whole weight, **{pattern[0, 0]:.3f}**, is on itself" in words
    assert f"the last can see all {dec.n_tokens} tokens" in words


def test_every_mention_of_the_mask_on_minilm_is_a_what_if():
    at = open_page("learn", s="the cat sat on the mat", step=str(STEP), learn_token="3")
    minilm = [
        m.value
        for m in [*at.markdown, *at.caption]
        if "MiniLM" in m.value and ("mask" in m.value or "what-if" in m.value.lower())
    ]
    assert minilm and all("what-if" in m.lower() for m in minilm[:2])
    assert any("never with this mask" in m for m in minilm)
    whatif = next(m.value for m in at.markdown if m.value.startswith("What-if, for token 3"))
    assert "with the mask switched on, **0.000**" in whatif
    assert "the mask is switched on to show the difference" not in " ".join(minilm)
    assert "almost nothing after it to hide" not in whatif  # token 3 has weight to hide


def test_a_token_with_nothing_to_hide_points_to_one_that_has(model):
    """On the river sentence the default token ("muddy") has only [SEP] after it: the what-if
    says so and names the word with the most weight on later tokens, by transformers' pattern."""
    from tests.core.oracles import reference

    text = "the river bank was muddy"
    at = open_page("learn", s=text, step=str(STEP))
    assert not at.exception
    whatif = next(m.value for m in at.markdown if m.value.startswith("What-if, for token"))
    layer, head = at.session_state["layer"], at.session_state["head"]
    pattern = reference("minilm", text).pattern_lhqk[layer, head].astype(np.float64)
    i = int(whatif.split("What-if, for token ")[1].split()[0])
    later = np.triu(pattern, 1).sum(-1)
    assert later[i] < 0.005
    later[[0, len(later) - 1]] = 0.0  # [CLS], [SEP]
    best = int(np.argmax(later))
    assert f"almost nothing after it to hide; token {best} " in whatif
    assert f"gives the most to later tokens, **{later[best]:.3f}**" in whatif


@pytest.mark.parametrize("text", ["the cat sat on the mat because it was tired"])
def test_one_pass_holds_an_exercise_per_token(smollm2, text):
    """The step's "why the mask lets a decoder learn from a whole text at once", against
    transformers: the probability one pass gives each real next token, and that a pass on a
    prefix alone guesses what the whole pass guesses there."""
    from attention_core.lessons.one_pass import CUT_MAX, one_pass
    from tests.core.oracles import oracle, reference, run_reference

    dec = trace_sentence(smollm2, text)
    mine = one_pass(smollm2, dec)
    ids = oracle("smollm2").ids(text)
    assert ids == list(dec.tokens.input_ids_t)
    probs_tv = reference("smollm2", text).probs_tv  # transformers' whole pass
    want = probs_tv[np.arange(len(ids) - 1), ids[1:]]
    np.testing.assert_allclose(mine.next_prob_t, want, atol=1e-5)
    assert mine.cut == min(max(1, len(ids) // 2), CUT_MAX)
    alone = run_reference(oracle("smollm2"), ids[: mine.cut]).probs_tv  # transformers, prefix
    assert np.abs(alone - probs_tv[: mine.cut]).max() < 1e-4  # the claim, on the oracle's side
    assert mine.gap < 1e-4  # "to within" rounding, on ours
    at = open_page("learn", s=text, step=str(STEP))
    assert not at.exception, [e.value for e in at.exception]
    words = " ".join(m.value for m in at.markdown)
    assert f"your first {mine.cut} token" in words
    assert "the same probabilities, apart from rounding in the last digits" in words
    assert f"largest difference **{mine.gap:.1e}**" in engineers_text(at)  # not the learner's
    assert f"one pass over your {len(ids)} tokens holds {len(ids) - 1} fair exercises" in words
    [shown] = [
        d.value for d in at.dataframe if "the real next token" in getattr(d.value, "columns", ())
    ]
    assert list(shown["the real next token"]) == list(dec.tokens.tokens[1:])
    np.testing.assert_allclose(shown["SmolLM2's probability for it"], want, atol=1e-5)
