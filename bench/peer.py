"""BertViz, the peer the app is compared with: the same model through transformers, then
``bertviz.head_view`` and ``model_view`` returning their HTML (what a notebook would receive).

Imports torch, transformers and bertviz; raises ImportError when bertviz is missing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import bertviz  # noqa: F401  (fail early, as ImportError, when it is not installed)

from attention_core import default_model_path


@dataclass(frozen=True)
class Peer:
    model: Any  # transformers BertModel, eager attention (sdpa returns no attentions)
    tokenizer: Any  # its fast tokenizer


def load_peer() -> Peer:
    """Load the packaged all-MiniLM-L6-v2 with transformers and warm it up on one sentence."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    path = default_model_path()
    peer = Peer(
        AutoModel.from_pretrained(path, attn_implementation="eager").eval(),
        AutoTokenizer.from_pretrained(path),
    )
    with torch.no_grad():
        peer.model(**peer.tokenizer("warm up", return_tensors="pt"), output_attentions=True)
    return peer


def bertviz_render(peer: Peer, text: str) -> tuple[float, int, int]:
    """(seconds, HTML bytes, tokens) for forward + head_view + model_view of ``text``."""
    import torch
    from bertviz import head_view, model_view

    start = time.monotonic()
    enc = peer.tokenizer(text, return_tensors="pt", padding=False, truncation=True, max_length=512)
    with torch.no_grad():
        attentions = peer.model(**enc, output_attentions=True).attentions
    tokens = peer.tokenizer.convert_ids_to_tokens(enc["input_ids"][0])
    n_bytes = 0
    for view in (head_view, model_view):
        html = view(attentions, tokens, html_action="return")
        n_bytes += len(html.data.encode())
        del html
    return time.monotonic() - start, n_bytes, len(tokens)
