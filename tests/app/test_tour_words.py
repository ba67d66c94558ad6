"""The tour's words against what it shows: the page's promise about where numbers come from,
engineers' words (shapes, load average, threads, bytes) only in the closed expander, three
decimals for learners."""

from __future__ import annotations

import re

import pytest

from tests.app.conftest import engineers_text, learner_texts, open_page
from ui import tour

STEP = {name: k for k, name in enumerate(tour.ORDER, start=1)}
TEXT = "she deposited cash at the bank before noon"
FOUR_DECIMALS = re.compile(r"(?<![\d.])-?\d+\.\d{4,}(?!\d)")


def test_the_promise_names_the_other_models_and_the_what_ifs():
    at = open_page("learn", s=TEXT, step="1")
    promise = at.caption[0].value
    assert "Every number and chart below comes from running" not in promise
    decoder = f"steps {STEP['masking']}, {STEP['jobs']} and {STEP['decoder']} also run the decoder"
    assert decoder + " SmolLM2" in promise
    assert f"steps {STEP['decoder']} and {STEP['writing']} the speech model Whisper" in promise
    six, seven, ten, eleven = (STEP[k] for k in ("scaling", "masking", "jobs", "weight_effect"))
    assert six < seven < ten < eleven  # named in the tour's order, each with its what-if
    assert (
        f"steps {six}, {seven}, {ten} and {eleven} add what-ifs ({six}: the √d_k division "
        f"switched off; {seven}: a mask MiniLM was not trained with; {ten} and {eleven}: heads "
        "switched off)"
    ) in promise
    assert f"step {STEP['scaling']} random heads, step {STEP['jobs']} random tokens" in promise
    assert f"step {STEP['cost']} times" in promise
    for name in ("scaling", "masking", "weight_effect", "jobs"):  # each what-if is on its step
        at = open_page("learn", s=TEXT, step=str(STEP[name]))
        assert "what-if" in " ".join(m.value for m in at.markdown).lower(), name
    at = open_page("learn", s=TEXT, step=str(STEP["scaling"]))
    assert "random heads" in " ".join(m.value for m in at.markdown)


def test_shapes_move_to_theengineers_text():
    at = open_page("learn", s=TEXT, step=str(STEP["queries"]), layer="2", head="5")
    learner = " ".join(learner_texts(at.main, formulas=True))
    assert "\\times" not in learner and "[10 × 384]" not in learner
    assert "[10 × 384] · [384 × 32] → [10 × 32]" in engineers_text(at)
    assert "each token's 384 numbers go in, this head's 32 query numbers come out" in learner


def test_load_threads_and_bytes_move_to_theengineers_text():
    at = open_page("learn", s=TEXT, step=str(STEP["cost"]))
    learner = " ".join(learner_texts(at.main, formulas=True))
    for word in ("load average", "thread", "bytes", "cores"):
        assert not re.search(rf"\b{word}", learner), word
    engineers = engineers_text(at)
    assert "load average" in engineers and "bytes" in engineers and "cores" in engineers


@pytest.mark.parametrize("step", range(1, tour.N_STEPS + 1))
def test_learners_read_three_decimals(step):
    at = open_page("learn", s=TEXT, step=str(step))
    assert not at.exception, [e.value for e in at.exception]
    long = [t for t in learner_texts(at.main, formulas=True) if FOUR_DECIMALS.search(t)]
    assert not long, long


@pytest.mark.parametrize("text", [TEXT, "dirty quantum plumbing"])
def test_neighbouring_positions_look_more_alike_than_distant_ones(model, text):
    """The positions step's sentence “Neighbours look alike, distant positions less”, on the
    cosines it quotes."""
    from attention_core import cosine, sinusoidal_positions, trace_sentence

    at = open_page("learn", s=text, step=str(STEP["positions"]))
    trace = trace_sentence(model, text)
    far, sinus = trace.n_tokens - 1, sinusoidal_positions(trace.n_tokens, 384)
    learned = [cosine(trace.position_td[1], trace.position_td[j]) for j in (2, far)]
    fixed = [cosine(sinus[1], sinus[j]) for j in (2, far)]
    assert learned[0] > learned[1] and fixed[0] > fixed[1]
    words = " ".join(m.value for m in at.markdown)
    assert f"**{learned[0]:.3f}** (learned) / **{fixed[0]:.3f}** (sinusoidal)" in words
    assert f"of positions 1 and {far}, **{learned[1]:.3f}** / **{fixed[1]:.3f}**" in words
