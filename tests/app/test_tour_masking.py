"""The tour's masking step: the causal mask shown for real on SmolLM2 (a decoder trained with
it: exact zeros above the diagonal), on MiniLM only as a named what-if, and the padding mask."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import trace_sentence
from tests.app.conftest import open_page
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
