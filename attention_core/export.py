"""A trace as a flat dict of arrays, and as an .npz file anyone can open with NumPy alone."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attention_core.forward import Trace
from attention_core.logit_lens import logit_lens
from attention_core.models.llama_forward import LlamaTrace
from attention_core.norm_weighted import norm_weighted_lhqk
from attention_core.rollout import trace_rollout

# The documented keys (README, "Export"): short names, shape suffixes dropped.
_RENAMES = {
    "scores_lhqk": "scores",
    "pattern_lhqk": "pattern",
    "hidden_ltd": "hidden",
    "delta_ltd": "delta",
    "value_norm_lhk": "value_norm",
}


def trace_arrays(trace: Trace | LlamaTrace) -> dict[str, NDArray[Any]]:
    """Every array of the trace under its export key, plus tokens, ids, offsets, settings (the
    knocked-out heads as [n, 2] layer, head rows), the norm-weighted patterns and the rollout.
    A decoder's trace gives pattern and scores (every layer computed: 566 MB at 512 tokens
    while writing), hidden, delta, ffn_out, each position's next-token top 10 and the logit
    lens's top token after every layer (``lens_top_ids`` [l, t])."""
    out: dict[str, NDArray[Any]] = {
        "tokens": np.asarray(trace.tokens.tokens, dtype=str),
        "input_ids": trace.tokens.input_ids_t,
        "offsets": trace.tokens.offsets_t2,
        "text": np.asarray(trace.tokens.text, dtype=str),
        "n_cut": np.asarray(trace.tokens.n_cut),
        "causal": np.asarray(trace.whatif.causal),
        "scale": np.asarray(trace.whatif.scale),
        "temperature": np.asarray(trace.whatif.temperature),
        "knocked": np.asarray(trace.whatif.knocked, np.int64).reshape(-1, 2),
        "norm_weighted": norm_weighted_lhqk(trace),
        "rollout": trace_rollout(trace),
    }
    if isinstance(trace, LlamaTrace):
        return out | _llama_arrays(trace)
    for f in fields(trace):
        value = getattr(trace, f.name)
        if isinstance(value, np.ndarray) and f.name != "pooled_d":
            out[_RENAMES.get(f.name, f.name)] = value
    out["sentence_embedding"] = trace.sentence_embedding_d  # a property: past 256 tokens, a pass
    out["head_delta_lhtd"] = trace.head_delta_lhtd  # computed on demand, not a stored field
    return out


def _llama_arrays(trace: LlamaTrace) -> dict[str, NDArray[Any]]:
    lens = logit_lens(trace, k=1)
    return {
        "model": np.asarray(trace.config.key, dtype=str),
        "pattern": np.asarray(trace.pattern_lhqk),
        "scores": np.asarray(trace.scores_lhqk),
        "hidden": trace.hidden_ltd,
        "delta": trace.delta_ltd,
        "ffn_out": trace.ffn_out_ltd,
        "next_top_ids": trace.next_top_ids_tk,
        "next_top_probs": trace.next_top_probs_tk,
        "value_norm": trace.value_norm_lhk,
        "lens_top_ids": lens.top_ids_lpk[:, :, 0],
        "lens_top_probs": lens.top_probs_lpk[:, :, 0],
    }


def save_npz(trace: Trace | LlamaTrace, path: str | Path) -> Path:
    """Write the trace to a compressed .npz; returns the path written."""
    path = Path(path)
    np.savez_compressed(path, **trace_arrays(trace))  # type: ignore[arg-type]  # numpy stub: **kwds
    return path
