"""The tour's "A weight is not an effect" step against the engine: the head whose weights and
norm-weighted view disagree most on the visitor's sentence, its shares, and what knocking it out
changes (a knocked pass run here), on a typed sentence and a preset; its link to the page."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import WhatIf, trace_sentence
from attention_core.methods.knockout import vector_change
from attention_core.methods.weight_effect import largest_gap, shares_hk
from tests.app.conftest import open_page
from ui import safe, tour

STEP = tour.ORDER.index("weight_effect") + 1


def test_the_step_follows_many_heads():
    assert tour.ORDER.index("heads") < STEP - 1  # after it (the jobs step may come between)
    assert tour.step(STEP).PAGE == "beyond"


@pytest.mark.parametrize(
    ("text", "token"), [("the cat saw the dog near the bank", 8), ("The river bank was muddy", 3)]
)
def test_numbers_are_the_engines(model, text, token):
    at = open_page("learn", s=text, step=str(STEP), learn_token=str(token))
    assert not at.exception, [e.value for e in at.exception]
    assert at.header[0].value == f"{STEP}. A weight is not an effect"
    trace = trace_sentence(model, text)
    best = largest_gap(trace)
    where = f"layer {best.layer}, head {best.head}"
    words = " ".join(m.value for m in at.markdown)
    assert (
        f"disagree most in **{where}**: {safe.token(trace.tokens.tokens[best.key])} gets "
        f"**{best.weight_share:.0%}** of the head's weight but only **{best.moved_share:.0%}** "
        "of what the head moves"
    ) in words
    weight_hk, moved_hk = shares_hk(
        trace.pattern_lhqk[best.layer], trace.value_norm_lhk[best.layer]
    )
    table = at.dataframe[0].value
    order = np.argsort(-weight_hk[best.head], kind="stable")[:5]
    assert list(table["token"]) == [f"{k}: {trace.tokens.tokens[k]}" for k in order]
    np.testing.assert_allclose(table["share of the weight"], weight_hk[best.head, order])
    np.testing.assert_allclose(table["share of what is moved"], moved_hk[best.head, order])
    assert f"= {moved_hk[best.head, best.key]:.3f}" in at.latex[0].value
    knocked = trace_sentence(model, text, WhatIf(knocked=((best.layer, best.head),)))
    change = vector_change(trace, knocked, token)
    assert f"cosine **{change.cosine_l[-1]:.3f}**" in words and "Now a what-if" in words
    # the vector the parked-on token hands on is shorter than the head's average: less moved
    assert moved_hk[best.head, best.key] < weight_hk[best.head, best.key]
    assert [m.value for m in at.metric] == [
        f"{change.cosine_l[-1]:.3f}",
        f"{change.sentence_cosine:.3f}",
    ]
    assert any("Kobayashi et al. 2020" in c.value for c in at.caption)
    link = at.get("page_link")[0].proto
    assert link.page == "beyond" and "Beyond the weights" in link.label
