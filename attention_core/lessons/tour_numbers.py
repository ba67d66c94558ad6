"""The numbers the guided tour's steps state about one trace (with demos.py, the tour's arithmetic):
the heads' proposals adding up to ΔE, a token's vector through one block with its LayerNorm and
feed-forward figures, each query's largest weights, and how fast a measured time grows.

The tour's pages only format these; tests/core/test_tour_numbers.py checks them against
transformers' BertModel (module outputs read with hooks) and torch's own operations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attention_core.models.bert.forward import Trace

F32 = NDArray[np.float32]
F64 = NDArray[np.float64]
I64 = NDArray[np.int64]


@dataclass(frozen=True)
class HeadSum:
    """A layer's ΔE for one token as the sum of its heads' proposals plus b_O."""

    proposals_hd: F32  # what each head proposes to add: z_h · W_O,h
    norms_h: F64  # ‖ΔE_h‖, each proposal's length
    total_d: F64  # Σ_h ΔE_h + b_O, summed in float64
    delta_d: F32  # the ΔE the forward pass added to the residual stream

    @property
    def gap(self) -> float:
        """Largest difference between the sum and the forward pass's ΔE."""
        return float(np.abs(self.total_d - self.delta_d).max())


def head_sum(trace: Trace, bias_d: NDArray[np.floating], layer: int, token: int) -> HeadSum:
    """The heads of ``layer`` proposing updates for ``token`` and their sum plus ``bias_d`` (b_O:
    attention_core.output_bias), beside the layer's ΔE."""
    proposals_hd = trace.head_delta_hd(layer, token)
    wide_hd = proposals_hd.astype(np.float64)
    return HeadSum(
        proposals_hd=proposals_hd,
        norms_h=np.linalg.norm(wide_hd, axis=-1),
        total_d=wide_hd.sum(axis=0) + np.asarray(bias_d, dtype=np.float64),
        delta_d=trace.delta_ltd[layer, token],
    )


@dataclass(frozen=True)
class BlockChain:
    """One token through one post-LayerNorm block (BERT), every sub-step's vector in order."""

    x_d: F32  # E, the vector entering the block
    delta_d: F32  # ΔE = Σ_h ΔE_h + b_O
    mid_d: F32  # E + ΔE, the first LayerNorm's input
    attn_out_d: F32  # a = LayerNorm(E + ΔE)
    ffn_d: F32  # FFN(a)
    resid_d: F32  # a + FFN(a), the second LayerNorm's input
    out_d: F32  # LayerNorm(a + FFN(a)), the block's output
    mid_mean: float  # μ of E + ΔE over its dimensions
    mid_std: float  # σ of E + ΔE (population: LayerNorm divides by d)
    n_active: int  # feed-forward GELU outputs above 0
    d_ff: int  # feed-forward width

    def vectors(self) -> tuple[F32, ...]:
        """The seven vectors in the block's order, E first."""
        return (
            self.x_d,
            self.delta_d,
            self.mid_d,
            self.attn_out_d,
            self.ffn_d,
            self.resid_d,
            self.out_d,
        )


def block_chain(trace: Trace, layer: int, token: int) -> BlockChain:
    """``token`` through block ``layer`` of ``trace`` (read from the trace, nothing recomputed
    except the two residual sums and the LayerNorm input's μ and σ)."""
    x_d, delta_d = trace.hidden_ltd[layer, token], trace.delta_ltd[layer, token]
    a_d, ffn_d = trace.attn_out_ltd[layer, token], trace.ffn_out_ltd[layer, token]
    mid_d = x_d + delta_d
    wide = mid_d.astype(np.float64)
    gelu_f = trace.ffn_hidden_ltf[layer, token]
    return BlockChain(
        x_d=x_d,
        delta_d=delta_d,
        mid_d=mid_d,
        attn_out_d=a_d,
        ffn_d=ffn_d,
        resid_d=a_d + ffn_d,
        out_d=trace.hidden_ltd[layer + 1, token],
        mid_mean=float(wide.mean()),
        mid_std=float(wide.std()),
        n_active=int((gelu_f > 0).sum()),
        d_ff=int(gelu_f.shape[-1]),
    )


@dataclass(frozen=True)
class TopKeys:
    """Each query's largest weights in a pattern, largest first (ties: the earlier key)."""

    keys_qr: I64  # the keys, [query, rank]
    share_qr: F64  # their weights
    row_sum_q: F64  # each query's total weight (1 for a softmax row), summed in float64


def top_keys(pattern_qk: NDArray[np.floating], ranks: int = 3) -> TopKeys:
    """The ``ranks`` largest weights of every row of ``pattern_qk`` (fewer when it has fewer
    keys)."""
    wide_qk = np.asarray(pattern_qk, dtype=np.float64)
    keys_qr = np.argsort(-wide_qk, axis=1, kind="stable")[:, :ranks].astype(np.int64)
    return TopKeys(
        keys_qr=keys_qr,
        share_qr=np.take_along_axis(wide_qk, keys_qr, axis=1),
        row_sum_q=wide_qk.sum(axis=1),
    )


def loglog_slope(n: NDArray[np.number], values: NDArray[np.number], last: int = 3) -> float:
    """The exponent p of values ≈ c·nᵖ over the ``last`` points: the least-squares slope of
    log(values) against log(n) (1 for linear growth, 2 for quadratic)."""
    if len(n) != len(values) or len(n) < 2:
        raise ValueError(f"need two or more (n, value) pairs, got {len(n)} and {len(values)}")
    x = np.log(np.asarray(n, dtype=np.float64)[-last:])
    y = np.log(np.asarray(values, dtype=np.float64)[-last:])
    return float(np.polyfit(x, y, 1)[0])


def attention_share(attention_s: NDArray[np.floating], dense_s: NDArray[np.floating]) -> F64:
    """The part of each measured layer time spent in attention rather than the dense layers."""
    att = np.asarray(attention_s, dtype=np.float64)
    return att / (att + np.asarray(dense_s, dtype=np.float64))
