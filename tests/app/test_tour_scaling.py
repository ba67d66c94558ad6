"""The tour's √d_k step against the engine: the spread of random dot products, the random heads
on the visitor's tokens (saturated without the division, its gradient small), and the sidebar's
trained head, called a what-if, each sentence's numbers recomputed here."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import trace_sentence
from attention_core.lessons.saturation import (
    dot_spread,
    random_scale_effect,
    saturation_curve,
    scale_effect,
)
from tests.app.conftest import open_page
from ui import tour

STEP = tour.ORDER.index("scaling") + 1
TEXTS = ("the cat sat on the mat because it was tired", "dirty quantum plumbing")


def _words(at) -> str:
    return " ".join(m.value for m in at.markdown)


def _autograd_norm(scores_qk: np.ndarray, d_k: int) -> float:
    """The mean over rows of the Frobenius norm of softmax(s / √d_k)'s Jacobian with respect to
    the raw scores s, by torch's autograd."""
    import torch

    def row(s: torch.Tensor) -> torch.Tensor:
        return torch.softmax(s / d_k**0.5, dim=-1)

    rows = torch.as_tensor(np.asarray(scores_qk, np.float64))
    norms = [torch.autograd.functional.jacobian(row, r).norm().item() for r in rows]
    return float(np.mean(norms))


def test_random_dot_products_spread_like_root_dk():
    d_ks = (1, 32, 384)
    means, stds = dot_spread(d_ks)
    np.testing.assert_allclose(stds / np.sqrt(d_ks), 1.0, atol=0.05)  # "about 1"
    assert np.all(np.abs(means) < 0.1 * stds)  # "its average stays near 0"
    at = open_page("learn", s=TEXTS[0], step=str(STEP))
    said = _words(at)
    scaled = ", ".join(f"{s / np.sqrt(d):.2f}" for d, s in zip(d_ks, stds, strict=True))
    assert f"these spreads become {scaled}: about 1" in said
    assert "19.8 at d_k = 384 (√384 = 19.6)" in said


@pytest.mark.parametrize("text", TEXTS)
def test_the_experiment_on_the_visitors_tokens(model, text):
    at = open_page("learn", s=text, step=str(STEP), layer="2", head="5")
    assert not at.exception, [e.value for e in at.exception]
    trace = trace_sentence(model, text)
    eff = random_scale_effect(trace.hidden_ltd[0], 384)
    # the same random heads as the chart's
    curve = saturation_curve(trace.hidden_ltd[0], d_ks=(384,))
    assert eff.top_scaled == pytest.approx(curve.max_scaled[0], rel=1e-9)
    assert eff.top_raw == pytest.approx(curve.max_unscaled[0], rel=1e-9)
    said = _words(at)
    assert (
        f"Without the division a row's largest weight averages **{eff.top_raw:.3f}** and "
        f"softmax's gradient at its own input **{eff.grad_raw:.3f}**; with it, "
        f"**{eff.top_scaled:.3f}** and **{eff.grad_scaled:.3f}**."
    ) in said
    # "saturate: one weight near 1" and "its gradient vanishes", on these numbers
    assert eff.top_raw > 0.9 and eff.top_raw > eff.top_scaled
    assert eff.grad_raw < eff.grad_scaled / 3
    assert "the rows pile onto one key and softmax's gradient shrinks" in said
    assert 0.5 < eff.spread_scaled < 1.5  # "keeps the spread near 1"
    # the trained head: a what-if, its numbers the engine's
    head = scale_effect(trace.scores_lhqk[2, 5], 32)
    assert "**What-if on this head** (layer 2, head 5)" in said
    assert "MiniLM was trained with the division" in said
    assert f"averages **{head.top_raw:.3f}** instead of **{head.top_scaled:.3f}**" in said
    assert (
        f"averages **{head.grad_raw:.3f}** per row without the division and "
        f"**{head.grad_scaled:.3f}** with it"
    ) in said
    # the gradient that reaches the raw scores (and W_Q, W_K), by torch's autograd, not ours
    to_scores = _autograd_norm(trace.scores_lhqk[2, 5], 32)
    assert head.grad_to_scores == pytest.approx(to_scores, rel=1e-6)
    assert head.grad_raw == pytest.approx(_autograd_norm(trace.scores_lhqk[2, 5], 1), rel=1e-6)
    more = "larger" if to_scores > head.grad_raw else "smaller"
    assert f"= **{to_scores:.3f}**, {more} than without" in said
    assert "when the scores move" not in said  # the old, wrong reading of the gradient
