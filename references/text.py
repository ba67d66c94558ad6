"""The reference libraries our numbers are checked against, shared by the app's "Verify against
the reference library" button (ui/verify.py) and the tests (tests/core/references.py).

The oracles are the libraries that run each model, never our engine: transformers' ``BertModel``
(eager attention: the sdpa default returns no attentions) on the packaged all-MiniLM-L6-v2
folder, sentence-transformers' ``encode`` on the same folder for the sentence embedding, and
transformers' ``LlamaForCausalLM`` from SmolLM2's GGUF file (dequantized to float32, ~17 s). Each
is loaded at most once per process (``functools.lru_cache(maxsize=1)``).

No streamlit here, and torch, transformers and sentence-transformers are imported inside the
functions that use them: importing this module costs the app nothing at start.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attention_core.core.config import ModelConfig
from attention_core.core.display import state_name
from attention_core.core.family import Stack

F32 = NDArray[np.float32]

# What each model's check imports (import names): the `verify` extra installs them all.
NEEDS: dict[str, tuple[str, ...]] = {
    "minilm": ("torch", "transformers", "sentence_transformers"),
    "smollm2": ("torch", "transformers", "gguf", "accelerate"),
    "whisper": ("torch", "transformers", "ctranslate2"),
}
# MiniLM's references are runtime requirements (the design names sentence-transformers); SmolLM2's
# GGUF loader and Whisper's CTranslate2 (references/whisper.py) need the verify extra on top.
INSTALL = {
    "minilm": ".venv/bin/pip install -r requirements.txt",
    "smollm2": '.venv/bin/pip install -e ".[verify]"',
    "whisper": '.venv/bin/pip install -e ".[verify]"',
}

# The hooked submodules, per family: the value projection, the output projection (W_O) and the
# attention layers' list, as transformers names them.
HOOK_PATHS = {
    "bert": ("attention.self.value", "attention.output.dense", "encoder.layer"),
    "llama": ("self_attn.v_proj", "self_attn.o_proj", "model.layers"),
}


def missing(model: str) -> list[str]:
    """The packages ``model``'s check needs that are not installed (import names)."""
    return [name for name in NEEDS[model] if importlib.util.find_spec(name) is None]


@dataclass(frozen=True)
class Oracle:
    """A transformers model with what the hooks need to know about its heads."""

    family: str  # "bert" or "llama"
    model: Any  # BertModel or LlamaForCausalLM, eval mode, float32
    tokenizer: Any  # transformers' tokenizer for the same files
    n_heads: int
    n_kv_heads: int
    d_head: int

    @property
    def layers(self) -> list[Any]:
        return list(self.model.get_submodule(HOOK_PATHS[self.family][2]))

    def ids(self, text: str, max_tokens: int | None = None) -> list[int]:
        """The tokenizer's ids, no padding (MiniLM's tokenizer.json pads to 128 when asked);
        cut to ``max_tokens`` the tokenizer's way (BERT keeps its final [SEP])."""
        if max_tokens is None:
            return list(self.tokenizer(text, padding=False, truncation=False)["input_ids"])
        out = self.tokenizer(text, padding=False, truncation=True, max_length=max_tokens)
        return list(out["input_ids"])


# Worst case 1 × MiniLM's float32 weights (91 MB), plus torch itself once imported.
@functools.lru_cache(maxsize=1)
def bert_oracle(folder: str) -> Oracle:
    """transformers' BertModel for the MiniLM folder, eager attention."""
    import transformers

    model = transformers.AutoModel.from_pretrained(folder, attn_implementation="eager").eval()
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    cfg = model.config
    e = cfg.hidden_size // cfg.num_attention_heads
    return Oracle("bert", model, tok, cfg.num_attention_heads, cfg.num_attention_heads, e)


def llama_oracle(path: str | None = None) -> Oracle:
    """transformers' LlamaForCausalLM from a GGUF file (default: the packaged SmolLM2)."""
    from attention_core.models.llama.model import smollm2_path

    return _llama_oracle(path or str(smollm2_path()))


# Worst case 1 × SmolLM2's weights dequantized to float32 (540 MB).
@functools.lru_cache(maxsize=1)
def _llama_oracle(path: str) -> Oracle:
    import torch
    import transformers

    torch.set_num_threads(1)
    folder, name = str(Path(path).parent), Path(path).name
    tok = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model: Any = transformers.AutoModelForCausalLM.from_pretrained(
        folder, gguf_file=name, attn_implementation="eager", dtype=torch.float32
    )
    model.eval()
    cfg = model.config
    e = cfg.hidden_size // cfg.num_attention_heads
    return Oracle("llama", model, tok, cfg.num_attention_heads, cfg.num_key_value_heads, e)


def oracle(key: str, path: str | None = None) -> Oracle:
    """The oracle for an engine model key, "minilm" or "smollm2", on its files at ``path``
    (default: the packaged model's)."""
    if key == "smollm2":
        return llama_oracle(path)
    from attention_core import default_model_path

    return bert_oracle(path or str(default_model_path()))


# Worst case 1 × MiniLM's weights again (91 MB): sentence-transformers loads its own copy.
@functools.lru_cache(maxsize=1)
def sentence_model(folder: str) -> Any:
    """sentence-transformers' model for the MiniLM folder, on the CPU."""
    import sentence_transformers

    return sentence_transformers.SentenceTransformer(folder, device="cpu")


@dataclass(frozen=True)
class Checked:
    """What the reference libraries make of one sentence."""

    ids: tuple[int, ...]  # the reference tokenizer's ids
    pattern_lhqk: F32  # output_attentions, every layer and head
    hidden_ltd: F32  # output_hidden_states: the embedding, then every layer's output
    sentence_d: F32 | None  # sentence-transformers' encode (MiniLM), None for a decoder


def check_sentence(key: str, path: str, text: str, max_tokens: int | None = None) -> Checked:
    """Run ``text`` through the reference libraries of model ``key`` (files at ``path``), cut to
    ``max_tokens`` tokens the tokenizer's way when given."""
    import torch

    ora = oracle(key, path)
    ids = ora.ids(text, max_tokens)
    with torch.no_grad():
        out = ora.model(
            input_ids=torch.as_tensor([ids]), output_attentions=True, output_hidden_states=True
        )
    sentence = None
    if key == "minilm":
        sentence = sentence_model(path).encode(text, convert_to_numpy=True).astype(np.float32)
    return Checked(
        ids=tuple(ids),
        pattern_lhqk=np.stack([a[0].numpy() for a in out.attentions]),
        hidden_ltd=np.stack([h[0].numpy() for h in out.hidden_states]),
        sentence_d=sentence,
    )


# How far our float32 numbers may be from the reference's, relative to the scale compared: MiniLM
# measured 3e-6 (weights) and 8e-7 (vectors); SmolLM2's 30 layers on dequantized weights 6e-6 and
# 7e-6 (tests/core use 1e-4 for it).
TOLERANCE = {"minilm": 1e-5, "smollm2": 1e-4}


@dataclass(frozen=True)
class Difference:
    """The largest difference between our numbers and the reference's for one quantity."""

    quantity: str  # what was compared, in plain words
    largest: float  # the absolute difference there
    relative: float  # ``largest`` over the scale compared (1 for weights; a layer's largest value)
    where: str  # where it is, in plain words
    tolerance: float  # the most ``relative`` may be
    scale: str = ""  # what ``relative`` is a fraction of, in words ("" for weights)

    @property
    def agrees(self) -> bool:
        return self.relative <= self.tolerance


def compare_patterns(ours: Stack, theirs: F32, tokens: tuple[str, ...], tol: float) -> Difference:
    """Attention weights, every layer and head: weights lie in [0, 1], so absolute = relative."""
    diff = np.abs(np.asarray(ours, np.float64) - theirs)
    layer, head, q, k = (int(i) for i in np.unravel_index(int(diff.argmax()), diff.shape))
    worst = float(diff[layer, head, q, k])
    where = f"layer {layer}, head {head}: “{tokens[q]}” attending to “{tokens[k]}”"
    return Difference("attention weights, every layer and head", worst, worst, where, tol)


def compare_states(
    ours: F32, theirs: F32, tokens: tuple[str, ...], tol: float, config: ModelConfig | None = None
) -> Difference:
    """Hidden states, relative to each state's largest reference value (SmolLM2's reach ~800);
    the worst one named by ``state_name(state, config)``."""
    diff = np.abs(np.asarray(ours, np.float64) - theirs)
    scale = np.abs(theirs).max(axis=(1, 2), keepdims=True).astype(np.float64)
    ratio = diff / scale
    state, t, d = (int(i) for i in np.unravel_index(int(ratio.argmax()), ratio.shape))
    where = f"{state_name(state, config)}, token “{tokens[t]}”, number {d} of {diff.shape[-1]}"
    largest, relative = float(diff[state, t, d]), float(ratio.max())
    scale = " times the layer's largest number"
    return Difference("token vectors, every layer", largest, relative, where, tol, scale)


def compare_sentence(ours: F32, theirs: F32, tol: float) -> Difference:
    """The pooled sentence vector (unit length, so absolute = relative)."""
    diff = np.abs(np.asarray(ours, np.float64) - theirs)
    d = int(diff.argmax())
    worst = float(diff[d])
    return Difference("the sentence's vector", worst, worst, f"number {d} of {len(diff)}", tol)


def round_up(value: float) -> str:
    """``value`` rounded up to one significant digit, in plain decimals: 2.7e-6 -> "0.000003"."""
    if value <= 0:
        return "0"
    exp = int(np.floor(np.log10(value)))
    digit = int(np.ceil(round(value / 10.0**exp, 9)))
    if digit == 10:
        digit, exp = 1, exp + 1
    return f"{digit * 10.0**exp:.{max(0, -exp)}f}"
