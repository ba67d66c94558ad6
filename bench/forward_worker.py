"""One side of a forward-pass comparison, in its own process as its users run it
(``python -m bench.forward_worker SIDE MODEL TOKENS [--hidden-only]``, started by
bench/forward.py): it loads the model, builds the input, runs one pass to warm up, prints one
JSON line ``{"ready": ...}``, then times one pass per ``go`` line read on stdin and prints
``{"s": wall, "cpu": process CPU, "faults": minor page faults}`` for each; ``quit`` or the end
of stdin ends it with its peak RSS.

SIDE ``engine`` runs ``trace_sentence`` (tokenizing and every intermediate kept: what a page
waits for); SIDE ``transformers`` runs the eager model under ``torch.no_grad()`` on the same
ids, with every attention and hidden state out (BertModel; LlamaForCausalLM with its logits),
or with the hidden states only (``--hidden-only``: every attention at 2,048 tokens would hold
30 × 9 × 2,048² floats, 4.5 GB). One thread each: the caller sets OMP/MKL/OPENBLAS to 1 and
torch.set_num_threads(1) is called here.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("TQDM_DISABLE", "1")  # transformers' GGUF loader draws its own tqdm bar

ROOT = Path(__file__).resolve().parents[1]
TEXT_FILE = ROOT / "README.md"  # a real page of prose, long enough for 2,048 tokens
MODELS = {"minilm": "minilm", "smollm2": "smollm2"}


def text_of(model: Any, n: int) -> str:
    """The first ``n`` tokens' worth of README.md (repeated if it ever were shorter), so both
    sides read the same ids; ValueError if it does not make exactly ``n`` tokens."""
    from attention_core import tokenize

    raw = TEXT_FILE.read_text()
    text = raw * (1 + 4 * n // max(1, len(raw.split())))
    tokens = tokenize(model, text, max_tokens=n)
    if len(tokens) != n:
        raise ValueError(f"README.md makes {len(tokens)} tokens, wanted {n}")
    return text


def allow_tokens(model: Any, n: int) -> None:
    """Let a model whose config stops short of ``n`` tokens run ``n`` (SmolLM2 was trained on
    8,192; the engine's own limit may still be lower while it is being raised)."""
    if model.config.max_tokens < n <= model.config.n_positions:
        config = dataclasses.replace(model.config, max_tokens=n, max_seq_length=n)
        object.__setattr__(model, "config", config)


def engine_pass(key: str, n: int) -> Callable[[], object]:
    from attention_core import WhatIf, load_model, trace_sentence

    model = load_model(MODELS[key])
    allow_tokens(model, n)
    text = text_of(model, n)
    return lambda: trace_sentence(model, text, WhatIf(), n)


def transformers_pass(key: str, n: int, hidden_only: bool) -> Callable[[], object]:
    import torch
    import transformers

    from attention_core import load_model, tokenize

    torch.set_num_threads(1)
    ours = load_model(MODELS[key])
    allow_tokens(ours, n)
    ids = torch.from_numpy(tokenize(ours, text_of(ours, n), max_tokens=n).input_ids_t)[None]
    if key == "minilm":
        hf = transformers.AutoModel.from_pretrained(str(ours.path), attn_implementation="eager")
    else:
        from attention_core.models.llama.model import SMOLLM2_FILE, smollm2_path

        hf = transformers.AutoModelForCausalLM.from_pretrained(
            str(smollm2_path().parent),
            gguf_file=SMOLLM2_FILE,
            attn_implementation="eager",
            dtype=torch.float32,
        )
    hf.eval()
    del ours  # the engine's weights have no place in the transformers user's process

    def forward() -> object:
        with torch.no_grad():
            return hf(input_ids=ids, output_attentions=not hidden_only, output_hidden_states=True)

    return forward


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def serve(run: Callable[[], object]) -> None:
    """Warm up once, say ready, then one timed pass per ``go``."""
    run()
    print(json.dumps({"ready": True, "peak_mb": peak_mb()}), flush=True)
    for line in sys.stdin:
        if line.strip() != "go":
            break
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        start, cpu = time.perf_counter(), time.process_time()
        out = run()
        wall, used = time.perf_counter() - start, time.process_time() - cpu
        faulted = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
        del out  # dropped before the next pass, as a page drops the trace it replaced
        print(json.dumps({"s": wall, "cpu": used, "faults": faulted}), flush=True)
    print(json.dumps({"done": True, "peak_mb": peak_mb()}), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.forward_worker", description=__doc__)
    parser.add_argument("side", choices=("engine", "transformers"))
    parser.add_argument("model", choices=tuple(MODELS))
    parser.add_argument("tokens", type=int)
    parser.add_argument("--hidden-only", action="store_true", help="transformers: no attentions")
    args = parser.parse_args(argv)
    if args.side == "engine":
        serve(engine_pass(args.model, args.tokens))
    else:
        serve(transformers_pass(args.model, args.tokens, args.hidden_only))
    return 0


if __name__ == "__main__":
    sys.exit(main())
