"""One GPT-2 block in NumPy over the shared core: LayerNorm -> attention (``core.attention.attend``)
-> residual add, LayerNorm -> MLP (tanh GELU) -> residual add. The pass (``forward``) and the
next-token reruns both call these, so a rerun computes what the pass did."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from attention_core.core.attention import attend
from attention_core.core.config import ModelConfig
from attention_core.core.functional import layer_norm
from attention_core.core.whatif import WhatIf
from tests.families.gpt2.model import GPT2LayerWeights, Norm

F32 = NDArray[np.float32]
ATTENTION_PARTS = ("q", "k", "v", "scores", "pattern", "z", "delta")
_GELU_C = np.float32(np.sqrt(2.0 / np.pi))


def gelu_new(x: F32) -> F32:
    """GPT-2's GELU, the tanh approximation (transformers' ``NewGELUActivation``). The engine's
    ``core.functional.gelu`` is the exact erf form (BERT's), a different function."""
    inner = x + np.float32(0.044715) * (x * x * x)
    inner *= _GELU_C
    np.tanh(inner, out=inner)
    inner += np.float32(1.0)
    inner *= x
    inner *= np.float32(0.5)
    return inner


def norm(x_td: F32, n: Norm, cfg: ModelConfig) -> F32:
    return layer_norm(x_td, n.gamma_d, n.beta_d, cfg.layer_norm_eps)


def attention_layer(
    lay: GPT2LayerWeights,
    cfg: ModelConfig,
    x_td: F32,
    whatif: WhatIf,
    layer: int,
    out: dict[str, F32] | None = None,
) -> dict[str, F32]:
    """Layer ``layer``'s attention over the stream ``x_td`` [t, d] under ``whatif`` (always
    causal; its hidden keys among the t, as a rerun over the first t tokens sees them): q, k, v
    [h, t, e], scores and pattern [h, t, t], z and the update delta [t, d] (Σ_h z_h · W_O,h +
    b_O; knocked heads' z zeroed first), written into ``out``'s arrays when given."""
    out = {} if out is None else out
    h, e, n = cfg.n_heads, cfg.d_head, len(x_td)
    qkv_tn = norm(x_td, lay.ln_1, cfg) @ lay.w_qkv_dn
    qkv_tn += lay.b_qkv_n
    parts: dict[str, F32] = {}
    for i, name in enumerate(("q", "k", "v")):
        head_view = qkv_tn[:, i * h * e : (i + 1) * h * e].reshape(n, h, e).transpose(1, 0, 2)
        parts[name] = _put(out, name, head_view)
    seen = replace(whatif.up_to(n), causal=True)
    kept: dict[str, F32] = {name: out[name] for name in ("scores", "pattern", "z") if name in out}
    scores, pattern, z = attend(parts["q"], parts["k"], parts["v"], seen, kept)
    z[list(whatif.knocked_in(layer))] = 0.0
    delta = np.matmul(z.transpose(1, 0, 2).reshape(n, h * e), lay.w_o_xd, out=out.get("delta"))
    delta += lay.b_o_d
    return {**parts, "scores": scores, "pattern": pattern, "z": z, "delta": delta}


def mlp(lay: GPT2LayerWeights, cfg: ModelConfig, resid_td: F32) -> F32:
    """The MLP's update of the stream ``resid_td`` (after attention): c_proj(gelu(c_fc(ln_2)))."""
    hidden_tf = norm(resid_td, lay.ln_2, cfg) @ lay.w_in_df
    hidden_tf += lay.b_in_f
    out_td = gelu_new(hidden_tf) @ lay.w_out_fd
    out_td += lay.b_out_d
    return out_td


def _put(out: dict[str, F32], name: str, value: F32) -> F32:
    dest = out.get(name)
    if dest is None:
        return np.ascontiguousarray(value)
    dest[...] = value
    return dest
