"""The tour's encoder-block step: what a LayerNorm does (mean 0, spread 1 only before its gain
and bias), that E + ΔE is not the block's output, and the sizes it quotes, against the trace."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import trace_sentence
from tests.app.conftest import open_page
from ui import tour

STEP = tour.ORDER.index("block") + 1
LAYER, HEAD = 3, 2


@pytest.mark.parametrize(("text", "token"), [("the cat sat on the mat because it was tired", 10)])
def test_layer_norm_and_the_blocks_output(model, text, token):
    at = open_page(
        "learn", s=text, step=str(STEP), layer=str(LAYER), head=str(HEAD), learn_token=str(token)
    )
    assert not at.exception, [e.value for e in at.exception]
    trace = trace_sentence(model, text)
    words = " ".join(m.value for m in at.markdown)
    assert "zero mean and unit spread" not in words  # the old claim, false after gain and bias
    assert "then multiplies each of its numbers by a learned gain and adds a learned bias" in words
    assert "E + ΔE on its own is not" in words
    mid = trace.hidden_ltd[LAYER, token] + trace.delta_ltd[LAYER, token]
    a = trace.attn_out_ltd[LAYER, token]
    out = trace.hidden_ltd[LAYER + 1, token]
    # E + ΔE is not the block's output: the output is what the second LayerNorm gives
    assert np.abs(mid - out).max() > 0.1
    norm = model.params.layer(LAYER).attn_norm
    normalized = (mid - mid.mean()) / mid.std()
    # a is the normalized sum times the gain plus the bias (eps 1e-12 is below float32 noise)
    np.testing.assert_allclose(normalized * norm.gamma_d + norm.beta_d, a, atol=1e-4)
    assert normalized.mean() == pytest.approx(0, abs=1e-6)
    assert normalized.std() == pytest.approx(1, abs=1e-6)
    assert np.linalg.norm(normalized) == pytest.approx(np.sqrt(384), rel=1e-6)
    # after gain and bias, a is not mean 0 and spread 1
    assert abs(a.std() - 1) > 0.01
    assert (
        f"E + ΔE has mean **{mid.astype(np.float64).mean():.3f}** and spread "
        f"**{mid.astype(np.float64).std():.3f}**"
    ) in words
    assert f"a size of √384 ≈ **{np.sqrt(384):.3f}**" in words
    assert (
        f"a has mean **{a.mean():.3f}**, spread **{a.std():.3f}** and size "
        f"**{np.linalg.norm(a):.3f}**"
    ) in words
    assert f"has size **{np.linalg.norm(out):.3f}**" in words
    caption = " ".join(c.value for c in at.caption)
    assert "pulls the size back to about the same value" not in caption
    assert "need not give the same size" in caption
    # "sets the size anew, whatever it was before": the input's size does not reach a
    double = 2 * mid
    again = (double - double.mean()) / double.std() * norm.gamma_d + norm.beta_d
    np.testing.assert_allclose(again, a, atol=1e-4)


def test_the_feed_forward_holds_more_weights_than_attention(model):
    at = open_page("learn", s="dirty quantum", step=str(STEP), layer="4", head="0")
    assert not at.exception, [e.value for e in at.exception]
    lay = model.params.layer(4)
    attention = lay.w_qkv_dn.size + lay.b_qkv_n.size + lay.w_o_dd.size + lay.b_o_d.size
    dense = lay.w_in_df.size + lay.b_in_f.size + lay.w_out_fd.size + lay.b_out_d.size
    assert dense > attention  # "holds more of the learned numbers"
    words = " ".join(m.value for m in at.markdown)
    assert (
        f"{dense:,} against attention's {attention:,} ({dense / attention:.3f} times as many) "
        "in every layer of this model"
    ) in words
    sizes = {(lay.w_qkv_dn.size, lay.w_in_df.size) for lay in map(model.params.layer, range(6))}
    assert len(sizes) == 1  # "every layer": all six have the same shapes
    assert "one half of an encoder block" not in words
