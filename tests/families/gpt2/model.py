"""GPT-2 from a transformers folder: ``config.json`` (``model_type`` "gpt2"), ``model.safetensors``
(read with ``safetensors.numpy``, no torch) and a ``tokenizer.json``.

GPT-2's linear layers are ``Conv1D``s, stored [in, out] (``x @ w + b``), so the arrays are used as
the file stores them. The LM head is the token embedding (tied), as transformers saves it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attention_core.core.config import ModelConfig, ModelLoadError
from attention_core.core.functional import gram_lhee

F32 = NDArray[np.float32]
ACTIVATION = "gelu_new"  # GPT-2's tanh GELU, the one the pass computes (layers.gelu_new)


@dataclass(frozen=True)
class Norm:
    gamma_d: F32
    beta_d: F32


@dataclass(frozen=True)
class GPT2LayerWeights:
    """One pre-norm block: LayerNorm, attention, LayerNorm, MLP; every matrix [in, out]."""

    ln_1: Norm
    w_qkv_dn: F32  # c_attn: [d, 3d], columns Q (head by head), then K, then V
    b_qkv_n: F32
    w_o_xd: F32  # attn.c_proj: [h·e, d], rows the heads' z features, head by head
    b_o_d: F32  # its bias (``methods.values.output_bias`` reads this name)
    ln_2: Norm
    w_in_df: F32  # mlp.c_fc
    b_in_f: F32
    w_out_fd: F32  # mlp.c_proj
    b_out_d: F32


@dataclass(frozen=True)
class GPT2Params:
    wte_vd: F32  # token embeddings, and the tied LM head: logits = x @ wte_vd.T
    wpe_pd: F32  # learned position embeddings
    layers: tuple[GPT2LayerWeights, ...]
    ln_f: Norm  # the final LayerNorm, before the LM head
    w_o_lhed: F32  # [l, h, e, d]: each head's rows of attn.c_proj (the layers' w_o_xd view it)
    gram_lhee: F32 = field(repr=False)  # W_O,h · W_O,hᵀ: the value norms' matrices

    def layer(self, index: int) -> GPT2LayerWeights:
        if not 0 <= index < len(self.layers):
            raise ValueError(f"layer {index} is outside 0..{len(self.layers) - 1}")
        return self.layers[index]


@dataclass(frozen=True)
class GPT2Model:
    """The config every family fills, the weights, the tokenizer."""

    config: ModelConfig
    params: GPT2Params = field(repr=False)
    tokenizer: Any = field(repr=False)  # tokenizers.Tokenizer
    path: Path  # the folder it was read from


def read_gpt2_json(folder: Path) -> dict[str, Any] | None:
    """The folder's ``config.json`` if it is a GPT-2 one, else None (what ``claims`` asks)."""
    try:
        cfg = json.loads((folder / "config.json").read_text())
    except (OSError, ValueError):
        return None
    return cfg if isinstance(cfg, dict) and cfg.get("model_type") == "gpt2" else None


def load_gpt2_config(path: str) -> ModelConfig:
    """A ``ModelConfig`` from a GPT-2 folder's ``config.json`` (no weights read)."""
    folder = Path(path).expanduser()
    cfg = read_gpt2_json(folder)
    if cfg is None:
        raise ModelLoadError(f"{folder} holds no GPT-2 config.json")
    unsupported = {
        "activation_function": ACTIVATION,
        "scale_attn_weights": True,
        "scale_attn_by_inverse_layer_idx": False,
        "add_cross_attention": False,
    }
    for key, wanted in unsupported.items():
        if cfg.get(key, wanted) != wanted:
            raise ModelLoadError(f"{folder}: {key}={cfg[key]!r} is not run (only {wanted!r})")
    d, h = int(cfg["n_embd"]), int(cfg["n_head"])
    return ModelConfig(
        name=folder.name,
        n_layers=int(cfg["n_layer"]),
        n_heads=h,
        d_model=d,
        d_head=d // h,
        d_ff=int(cfg.get("n_inner") or 4 * d),
        n_positions=int(cfg["n_positions"]),
        vocab_size=int(cfg["vocab_size"]),
        layer_norm_eps=float(cfg["layer_norm_epsilon"]),
        pooling="",
        normalize=False,
        max_seq_length=int(cfg["n_positions"]),
        key=str(path),
        family="gpt2",
        causal=True,
        positions="learned",
        has_lm_head=True,  # tied to the token embedding
        has_sentence_embedding=False,
        special_tokens=False,
        attention_bias=True,
        post_norm=False,
    )


def load_gpt2(path: str) -> GPT2Model:
    """The config, the float32 weights and the tokenizer of a GPT-2 folder."""
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    config = load_gpt2_config(path)
    folder = Path(path).expanduser()
    try:
        weights = load_file(str(folder / "model.safetensors"))
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    except Exception as err:  # a missing or broken file: safetensors and tokenizers raise many
        raise ModelLoadError(f"{folder}: cannot read the weights or tokenizer: {err}") from err
    try:
        params = _lay_out(weights, config)
    except KeyError as err:
        raise ModelLoadError(f"{folder} lacks the weight {err.args[0]!r}") from err
    return GPT2Model(config, params, tokenizer, folder)


def _norm(weights: dict[str, F32], name: str) -> Norm:
    return Norm(_f32(weights[f"{name}.weight"]), _f32(weights[f"{name}.bias"]))


def _f32(array: NDArray[Any]) -> F32:
    return np.ascontiguousarray(array, np.float32)


def _lay_out(weights: dict[str, F32], cfg: ModelConfig) -> GPT2Params:
    """The state dict's arrays as the pass reads them (``GPT2LMHeadModel`` keys, or
    ``GPT2Model``'s without the ``transformer.`` prefix)."""
    prefix = "transformer." if "transformer.wte.weight" in weights else ""
    w = {key.removeprefix(prefix): value for key, value in weights.items()}
    h, e, d = cfg.n_heads, cfg.d_head, cfg.d_model
    w_o_lhed = np.stack([_f32(w[f"h.{i}.attn.c_proj.weight"]) for i in range(cfg.n_layers)])
    w_o_lhed = w_o_lhed.reshape(cfg.n_layers, h, e, d)
    layers = []
    for i in range(cfg.n_layers):
        p = f"h.{i}."
        layers.append(
            GPT2LayerWeights(
                ln_1=_norm(w, p + "ln_1"),
                w_qkv_dn=_f32(w[p + "attn.c_attn.weight"]),
                b_qkv_n=_f32(w[p + "attn.c_attn.bias"]),
                w_o_xd=w_o_lhed[i].reshape(h * e, d),  # a view of the stack
                b_o_d=_f32(w[p + "attn.c_proj.bias"]),
                ln_2=_norm(w, p + "ln_2"),
                w_in_df=_f32(w[p + "mlp.c_fc.weight"]),
                b_in_f=_f32(w[p + "mlp.c_fc.bias"]),
                w_out_fd=_f32(w[p + "mlp.c_proj.weight"]),
                b_out_d=_f32(w[p + "mlp.c_proj.bias"]),
            )
        )
    return GPT2Params(
        wte_vd=_f32(w["wte.weight"]),
        wpe_pd=_f32(w["wpe.weight"]),
        layers=tuple(layers),
        ln_f=_norm(w, "ln_f"),
        w_o_lhed=w_o_lhed,
        gram_lhee=gram_lhee(w_o_lhed),
    )
