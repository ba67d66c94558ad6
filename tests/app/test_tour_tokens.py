"""The tour's first step against the engine: the two “bank”s share a static vector, differ from
the embedding on (their positions differ), and part ways layer by layer, not monotonically: each
word of the paragraph that says so is checked against the cosines of the two traces."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import cosine, trace_sentence
from attention_core.lessons.demos import parting
from tests.app.conftest import open_page
from ui import tour
from ui.tour.common import BANK_A, BANK_B, layers
from ui.tour.tokens import bank_text

STEP = tour.ORDER.index("tokens") + 1


@pytest.fixture(scope="module")
def banks(model):
    a, b = trace_sentence(model, BANK_A), trace_sentence(model, BANK_B)
    return a, a.tokens.tokens.index("bank"), b, b.tokens.tokens.index("bank")


def _paragraph(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("Try it with the word"))


@pytest.mark.parametrize("text", ["she deposited cash at the bank before noon", "dirty quantum"])
def test_the_bank_paragraph_is_the_engines(banks, text):
    a, ia, b, ib = banks
    at = open_page("learn", s=text, step=str(STEP))
    assert not at.exception, [e.value for e in at.exception]
    cos = [cosine(a.word_td[ia], b.word_td[ib])]
    cos += [cosine(a.hidden_ltd[s, ia], b.hidden_ltd[s, ib]) for s in range(7)]
    said = _paragraph(at)
    assert said == bank_text(parting(a, ia, b, ib), ia, ib)
    # same token, same lookup row: exactly the same vector
    np.testing.assert_array_equal(a.word_td[ia], b.word_td[ib])
    assert f"(cosine **{cos[0]:.3f}**)" in said and f"{cos[0]:.3f}" == "1.000"
    # the positions differ, so the input of layer 0 differs already
    assert ia != ib and f"(position {ia} in A, {ib} in B)" in said
    assert cos[1] < 0.99 and f"already **{cos[1]:.3f}**" in said
    # the largest drop, named from the numbers
    drops = np.array(cos[1:-1]) - np.array(cos[2:])
    big = int(np.argmax(drops))
    assert (
        f"largest single drop is across layer {big} ({cos[big + 1]:.3f} → {cos[big + 2]:.3f})"
        in said
    )
    # not monotone: the layers where the cosine rises are named
    rises = [int(x) for x in np.flatnonzero(drops < 0)]
    assert rises, "the two “bank”s come closer again in some layer"
    assert f"it rises again across {layers(rises)}" in said
    assert f"ends at **{cos[-1]:.3f}** after the last layer" in said
    assert "Only after" not in said  # the old claim: they part only after the layers
    table = at.dataframe[0].value
    np.testing.assert_allclose(table["cosine"], cos, rtol=1e-6)
    np.testing.assert_allclose(table["change across the layer"][2:], -drops, atol=1e-6)
    assert list(table["“bank” in A and B"])[:3] == ["static vectors", "embedding", "after layer 0"]
    assert _metric(at, "“bank”: cosine after all 6 layers") == f"{cos[-1]:.3f}"


def _metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(label))


def test_the_default_bank_pair_today(banks):
    """The figures the closing note quotes: layer 0 drops most, layers 3 and 4 bring them closer."""
    cut = parting(*banks)
    assert cut.largest_drop == 0
    assert [int(x) for x in np.flatnonzero(cut.drop_l < 0)] == [3, 4]
    assert cut.cos_s[1] == pytest.approx(0.963, abs=5e-4)


def test_layers_names_one_or_several():
    assert layers([3]) == "layer 3"
    assert layers([3, 4]) == "layers 3 and 4"
    assert layers([1, 3, 4]) == "layers 1, 3 and 4"


def test_the_positions_step_says_the_same_about_the_banks(banks):
    """Step 2 quotes the cosine before and after the embedding's LayerNorm; the second is the
    “embedding” row of step 1's table."""
    a, ia, b, ib = banks
    at = open_page("learn", s="dirty quantum", step=str(tour.ORDER.index("positions") + 1))
    assert not at.exception, [e.value for e in at.exception]
    words = " ".join(m.value for m in at.markdown)
    before = cosine(a.embed_sum_td[ia], b.embed_sum_td[ib])
    entering = parting(a, ia, b, ib).cos_s[1]
    assert f"the two sums have cosine **{before:.3f}**" in words
    assert f"as they enter layer 0, **{entering:.3f}**" in words
    assert before < 0.99 and entering < 0.99
