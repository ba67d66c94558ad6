"""A GPT-2 folder of random weights, written by transformers itself (no download): the family's
test model, and, loaded back with transformers, the reference it is checked against."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.families.gpt2.tokenizer import build_tokenizer

# Small, as the brief asks: 2 layers of 4 heads, d_model 64, 100 words, 32 positions.
SIZES = {"n_layer": 2, "n_head": 4, "n_embd": 64, "vocab_size": 100, "n_positions": 32}
NOISE = 0.2  # added to every parameter after init: transformers initializes biases to 0 and
# LayerNorms to (1, 0), and weights at std 0.02 give near-uniform patterns; this makes every
# bias and norm count, and the patterns peaked.


def random_gpt2(seed: int = 0) -> Any:
    """``GPT2LMHeadModel`` of ``SIZES`` with random weights from ``seed``, in eval mode (no
    dropout), attention computed eagerly (so ``output_attentions`` returns the patterns)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(**SIZES, bos_token_id=None, eos_token_id=None, attn_implementation="eager")
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(config).eval()
    with torch.no_grad():
        for param in model.parameters():  # the tied embedding / LM head once
            param.add_(NOISE * torch.randn_like(param))
    return model


def write_gpt2_folder(folder: Path, seed: int = 0) -> Path:
    """``config.json`` and ``model.safetensors`` (transformers' ``save_pretrained``) and a
    ``tokenizer.json`` (``tokenizer.build_tokenizer``) in ``folder``."""
    model = random_gpt2(seed)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder, safe_serialization=True)
    build_tokenizer(model.config.vocab_size).save(str(folder / "tokenizer.json"))
    return folder


def reference(folder: Path) -> Any:
    """The folder loaded back by transformers (eager attention, eval mode)."""
    from transformers import GPT2LMHeadModel

    return GPT2LMHeadModel.from_pretrained(folder, attn_implementation="eager").eval()
