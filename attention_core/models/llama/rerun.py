"""A decoder pass resumed above one layer for many variants of its residual stream at once: how
``methods.knockout.head_importance`` knocks out each of SmolLM2's 270 heads alone without
rerunning the layers below it (the nine heads of a layer run side by side, and only the tokens up
to the chosen position: a causal model's later tokens cannot change it)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from attention_core.core.functional import softmax
from attention_core.core.whatif import WhatIf
from attention_core.models.llama.layers import (
    attention_layer,
    delta_of,
    logits,
    mlp,
    rms_norm,
    rope_tables,
)
from attention_core.models.llama.model import LlamaModel

F32 = NDArray[np.float32]


def next_probs_from(
    model: LlamaModel, whatif: WhatIf, layer: int, resid_btd: F32, position: int
) -> F32:
    """Next-token distributions [b, vocab] at ``position`` of the variants ``resid_btd`` (the
    stream after ``layer``'s attention), under the pass's switches ``whatif``."""
    cfg = model.config
    x_btd = _finish_layer(model, layer, resid_btd)
    final_bd = _run_on(model, whatif, x_btd, layer + 1)[:, position]
    return softmax(logits(model, rms_norm(final_bd, model.params.final_norm_d, cfg.layer_norm_eps)))


def _finish_layer(model: LlamaModel, layer: int, resid_btd: F32) -> F32:
    """The MLP half of ``layer`` for every variant at once: resid + MLP(resid)."""
    b, t, d = resid_btd.shape
    flat = resid_btd.reshape(b * t, d)
    return (flat + mlp(model.params.layers[layer], model.config, flat)).reshape(b, t, d)


def _run_on(model: LlamaModel, whatif: WhatIf, x_btd: F32, start: int) -> F32:
    """Layers ``start``.. over every variant (attention one variant at a time, the MLP of all
    together), under the switches ``whatif``; the residual stream after the last layer."""
    cfg, t = model.config, x_btd.shape[1]
    whatif = whatif.up_to(t)
    cos_te, sin_te = rope_tables(cfg, np.arange(t))
    for layer in range(start, cfg.n_layers):
        lay = model.params.layers[layer]
        z_bhte = [attention_layer(lay, cfg, x, cos_te, sin_te, whatif, layer).z_hqe for x in x_btd]
        delta_btd = np.stack([delta_of(lay, z_hte) for z_hte in z_bhte])
        x_btd = _finish_layer(model, layer, x_btd + delta_btd)
    return x_btd
