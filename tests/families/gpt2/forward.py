"""The GPT-2 pass over a sentence, and its trace: every layer's arrays kept, as BERT's trace keeps
them, with the names and meanings of the engine's ``Trace`` protocol (``core.family``).

``hidden_ltd`` is transformers' ``output_hidden_states``: [0] the token plus position
embeddings, [l] the stream entering layer l, [n_layers] the last block's output through the final
LayerNorm ``ln_f`` (as transformers gives it, and as the Llama family's trace does).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from attention_core.core.buffers import buffer_nbytes, float32_views
from attention_core.core.config import ModelConfig
from attention_core.core.functional import softmax, value_norms_gram
from attention_core.core.tokens import Tokens
from attention_core.core.whatif import WhatIf
from tests.families.gpt2.layers import ATTENTION_PARTS, attention_layer, mlp, norm
from tests.families.gpt2.model import GPT2Model

if TYPE_CHECKING:
    from attention_core.core.family import NextTokenTrace

F32 = NDArray[np.float32]
N_TOP = 10  # next-token candidates kept per position (as the Llama trace keeps)


class Head:
    """The model behind a trace, for what a trace computes when asked (the next-token
    distribution, reruns from a layer). Not a dataclass: the server's byte count
    (``server.budget.nbytes``) walks dataclass fields, and the weights are the model's, not
    the trace's."""

    def __init__(self, model: GPT2Model, whatif: WhatIf) -> None:
        self.model, self.whatif = model, whatif

    def logits(self, x_pd: F32, normed: bool) -> F32:
        """The tied LM head's logits of stream rows, after ``ln_f`` unless ``normed``."""
        params, cfg = self.model.params, self.model.config
        return (x_pd if normed else norm(x_pd, params.ln_f, cfg)) @ params.wte_vd.T

    def rerun(self, layer: int, resid_btd: F32) -> F32:
        """The final-normed stream of variants whose stream after ``layer``'s attention is
        ``resid_btd`` [b, t, d] (the first t tokens): the rest of ``layer``, then the layers
        after it, each variant on its own, under the trace's switches."""
        params, cfg = self.model.params, self.model.config
        out = np.empty_like(resid_btd)
        for b, resid_td in enumerate(resid_btd):
            x_td = resid_td + mlp(params.layers[layer], cfg, resid_td)
            for later in range(layer + 1, cfg.n_layers):
                lay = params.layers[later]
                x_td = x_td + attention_layer(lay, cfg, x_td, self.whatif, later)["delta"]
                x_td = x_td + mlp(lay, cfg, x_td)
            out[b] = norm(x_td, params.ln_f, cfg)
        return out


@dataclass(frozen=True, eq=False)
class GPT2Trace:
    """Every intermediate of one pass. Rows of a pattern are queries, columns keys."""

    tokens: Tokens
    config: ModelConfig
    whatif: WhatIf  # causal always on: a decoder's own mask cannot be switched off
    q_lhqe: F32
    k_lhke: F32
    v_lhke: F32
    scores_lhqk: F32  # raw Q·Kᵀ, before scaling and masking
    pattern_lhqk: F32  # softmax attention weights (rows sum to 1)
    z_lhqe: F32  # pattern · V, per head (a knocked head's zeroed)
    value_norm_lhk: F32  # ‖v_k · W_O,h‖ (norm_weighted)
    delta_ltd: F32  # attention update added to the residual: Σ_h z_h · W_O,h + b_O
    ffn_out_ltd: F32  # MLP update added to the residual
    hidden_ltd: F32  # [l+1, t, d], see the module docstring
    w_o_lhed: F32  # each head's slice of W_O (the model's array, shared)
    next_top_ids_tk: NDArray[np.int64]  # each position's 10 likeliest next tokens
    next_top_probs_tk: F32  # their probabilities (float32 softmax of the logits)
    head: Head = field(repr=False)

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)

    def head_delta_hd(self, layer: int, token: int) -> F32:
        """What every head of ``layer`` proposes to add to ``token``'s vector, [head, d]."""
        z_h1e = self.z_lhqe[layer, :, token, None, :]
        return (z_h1e @ self.w_o_lhed[layer])[:, 0]  # [h,1,e] @ [h,e,d] -> [h,d]

    def next_probs_v(self, position: int) -> F32:
        """The whole next-token distribution after ``position`` (float32 softmax)."""
        if not 0 <= position < self.n_tokens:
            raise ValueError(f"position {position} is outside 0..{self.n_tokens - 1}")
        return self.next_probs_tv(position, position + 1)[0]

    def next_probs_tv(self, start: int, stop: int) -> F32:
        """The next-token distributions after positions ``start`` .. ``stop - 1`` [t, vocab]."""
        if not 0 <= start < stop <= self.n_tokens:
            raise ValueError(f"positions {start}..{stop - 1} are outside 0..{self.n_tokens - 1}")
        return softmax(self.head.logits(self.hidden_ltd[-1][start:stop], normed=True))

    def unembed_top(self, x_pd: F32, normed: bool) -> tuple[NDArray[np.int64], F32]:
        """The 10 likeliest next tokens of stream rows ``x_pd`` and their probabilities, after
        ``ln_f`` unless ``normed`` (the logit lens)."""
        return top_k(softmax(self.head.logits(np.asarray(x_pd, np.float32), normed)), N_TOP)

    def next_probs_from(self, layer: int, resid_btd: F32, position: int) -> F32:
        """Next-token distributions [b, vocab] at ``position`` of variants whose stream after
        ``layer``'s attention is ``resid_btd`` (each head knocked out alone, say)."""
        final_bd = self.head.rerun(layer, np.asarray(resid_btd, np.float32))[:, position]
        return softmax(self.head.logits(final_bd, normed=True))

    def token_text(self, token_id: int) -> str:
        return str(self.head.model.tokenizer.id_to_token(token_id))


def top_k(probs_tv: F32, k: int) -> tuple[NDArray[np.int64], F32]:
    """The ``k`` most probable ids of each row, most probable first (ties: lower id first), and
    their probabilities."""
    ids = np.argsort(-probs_tv, axis=-1, kind="stable")[:, :k].astype(np.int64)
    return ids, np.take_along_axis(probs_tv, ids, axis=-1)


def _shapes(cfg: ModelConfig, n: int) -> dict[str, tuple[int, ...]]:
    """The trace's float32 arrays for ``n`` tokens, one buffer (``core.buffers``)."""
    n_l, h, e, d = cfg.n_layers, cfg.n_heads, cfg.d_head, cfg.d_model
    return {
        "q": (n_l, h, n, e),
        "k": (n_l, h, n, e),
        "v": (n_l, h, n, e),
        "scores": (n_l, h, n, n),
        "pattern": (n_l, h, n, n),
        "z": (n_l, h, n, e),
        "value_norm": (n_l, h, n),
        "delta": (n_l, n, d),
        "ffn_out": (n_l, n, d),
        "hidden": (n_l + 1, n, d),
        "next_top_probs": (n, N_TOP),
    }


def gpt2_trace_nbytes(cfg: ModelConfig, n_tokens: int) -> int:
    """Bytes of the arrays a ``GPT2Trace`` of ``n_tokens`` tokens holds, before it is computed:
    the one buffer of its layers' arrays, the shared W_O it holds, the top-10 ids and the
    tokens' ids, offsets and special flags."""
    n = n_tokens
    w_o = 4 * cfg.n_layers * cfg.n_heads * cfg.d_head * cfg.d_model
    return buffer_nbytes(_shapes(cfg, n)) + w_o + 8 * n * N_TOP + n * (8 + 16 + 1)


def run_gpt2(model: GPT2Model, tokens: Tokens, whatif: WhatIf = WhatIf()) -> GPT2Trace:
    """The pass over ``tokens`` under ``whatif`` (scale, temperature, hidden keys, knocked heads;
    always causal), keeping every intermediate."""
    cfg, params, n = model.config, model.params, len(tokens)
    if not 0 < n <= cfg.n_positions:
        raise ValueError(f"{n} tokens: GPT-2 reads 1 to {cfg.n_positions}")
    whatif = replace(whatif, causal=True)
    whatif.check_heads(cfg.n_layers, cfg.n_heads)
    whatif.check_tokens(n)  # hidden positions beyond the tokens, or all of them: ValueError
    out = float32_views(_shapes(cfg, n))
    hidden = out["hidden"]
    hidden[0] = params.wte_vd[tokens.input_ids_t] + params.wpe_pd[:n]
    for layer, lay in enumerate(params.layers):
        parts = {name: out[name][layer] for name in ATTENTION_PARTS}
        attention_layer(lay, cfg, hidden[layer], whatif, layer, parts)
        out["value_norm"][layer] = value_norms_gram(parts["v"], params.gram_lhee[layer])
        resid_td = hidden[layer] + parts["delta"]
        out["ffn_out"][layer] = mlp(lay, cfg, resid_td)
        np.add(resid_td, out["ffn_out"][layer], out=hidden[layer + 1])
    hidden[-1] = norm(hidden[-1], params.ln_f, cfg)
    head = Head(model, whatif)
    top_ids, top_probs = top_k(softmax(head.logits(hidden[-1], normed=True)), N_TOP)
    out["next_top_probs"][...] = top_probs
    return GPT2Trace(
        tokens=tokens,
        config=cfg,
        whatif=whatif,
        q_lhqe=out["q"],
        k_lhke=out["k"],
        v_lhke=out["v"],
        scores_lhqk=out["scores"],
        pattern_lhqk=out["pattern"],
        z_lhqe=out["z"],
        value_norm_lhk=out["value_norm"],
        delta_ltd=out["delta"],
        ffn_out_ltd=out["ffn_out"],
        hidden_ltd=hidden,
        w_o_lhed=params.w_o_lhed,
        next_top_ids_tk=top_ids,
        next_top_probs_tk=out["next_top_probs"],
        head=head,
    )


if TYPE_CHECKING:  # mypy checks the trace against the interface the methods read

    def _is_a_next_token_trace(trace: GPT2Trace) -> NextTokenTrace:
        return trace
