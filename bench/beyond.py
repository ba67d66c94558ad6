"""``python -m bench beyond [--repeats N]``: the views beyond the attention weights in the NumPy
engine, both models, one BLAS thread, figures beside their targets (a missed target is reported,
never raised). Medians of alternated runs; the load average is printed before and after.

  knock    a knock-out rerun (two heads off, the whole trace again) against one plain forward
           pass, at 128 and 512 tokens, run alternately; target ratio <= 1.2
  sweep    the importance sweep (every head knocked out alone: 72 MiniLM / 270 SmolLM2 reruns)
           at 20 tokens, the prediction after the last token; target <= 30 s on one core
  rollout  attention rollout of a whole trace (every layer) at 128 and 512 tokens
  lens     SmolLM2's logit lens: every layer at 16 positions, and at every position of 128
  norms    what the value norms add to a forward pass (the pass with and without them is not
           separable, so: value_norms_gram over every layer, timed alone), per model at 512
The browser's redraw of the new stages is measured by ``python -m bench explorer``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from attention_core import (
    WhatIf,
    head_importance,
    load_model,
    logit_lens,
    run_model,
    tokenize,
    trace_rollout,
)
from attention_core.core.functional import value_norms_gram
from attention_core.models.llama.forward import run_llama
from bench.sentences import sentence


def _median(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _run(model: Any) -> Callable[[Any, WhatIf], Any]:
    return run_llama if model.config.family == "llama" else run_model  # type: ignore[return-value]


def bench_knock(name: str, model: Any, repeats: int) -> list[str]:
    lines = []
    for n, b, a in measure_knock(model, repeats):
        verdict = "ok" if a / b <= 1.2 else "MISS"
        lines.append(f"| {name} | {n} | {b:.0f} | {a:.0f} | {a / b:.2f} | {verdict} |")
    return lines


def measure_knock(
    model: Any, repeats: int, sizes: tuple[int, ...] = (128, 512)
) -> list[tuple[int, float, float]]:
    """(tokens, plain forward ms, knock-out rerun ms), medians of alternated runs."""
    run, figures = _run(model), []
    off = WhatIf(knocked=((1, 2), (model.config.n_layers - 2, 0)))
    for n in sizes:
        tokens = tokenize(model, sentence(model, n))
        run(model, tokens, WhatIf())
        plain, knocked = [], []
        for _ in range(repeats):  # alternated, so a load change hits both alike
            plain.append(_median(lambda t=tokens: run(model, t, WhatIf()), 1))
            knocked.append(_median(lambda t=tokens: run(model, t, off), 1))
        figures.append((n, statistics.median(plain) * 1e3, statistics.median(knocked) * 1e3))
    return figures


def bench_sweep(name: str, model: Any) -> str:
    tokens = tokenize(model, sentence(model, 20))
    trace = _run(model)(model, tokens, WhatIf())
    start = time.perf_counter()
    importance = head_importance(model, trace, trace.n_tokens - 1)
    took = time.perf_counter() - start
    runs = importance.effect_lh.size
    verdict = "ok" if took <= 30 else "MISS"
    return f"| {name} | {runs} | {took:.1f} s | {verdict} |"


def bench_rollout(name: str, model: Any, repeats: int) -> str:
    cells = []
    for n in (128, 512):
        trace = _run(model)(model, tokenize(model, sentence(model, n)), WhatIf())
        cells.append(f"{_median(lambda t=trace: _fresh_rollout(t), repeats) * 1e3:.0f} ms")
    return f"| {name} | {' | '.join(cells)} |"


def _fresh_rollout(trace: Any) -> Any:
    """The rollout as computed the first time (a decoder trace keeps it after that)."""
    from attention_core.methods.rollout import rollout_lqk

    return rollout_lqk(trace.pattern_lhqk) if hasattr(trace, "memo") else trace_rollout(trace)


def bench_lens(model: Any, repeats: int) -> str:
    trace = run_llama(model, tokenize(model, sentence(model, 128)), WhatIf())
    last = range(trace.n_tokens - 16, trace.n_tokens)
    window = _median(lambda: logit_lens(trace, positions=last), repeats)
    every = _median(lambda: logit_lens(trace), max(1, repeats // 2))
    n = trace.n_tokens
    return f"logit lens, 30 layers: 16 positions {window * 1e3:.0f} ms, all {n} {every:.2f} s"


def bench_norms(name: str, model: Any, repeats: int) -> str:
    trace = _run(model)(model, tokenize(model, sentence(model, 512)), WhatIf())
    v = [
        trace.v_lhke[i] if name == "MiniLM" else trace.layer(i).v_gke
        for i in range(len(trace.value_norm_lhk))
    ]
    gram = model.params.gram_lhee  # what the pass uses, kept from load
    took = _median(lambda: [value_norms_gram(v[i], gram[i]) for i in range(len(v))], repeats)
    forward = _median(lambda: _run(model)(model, trace.tokens, WhatIf()), max(1, repeats // 2))
    return f"| {name} | {took * 1e3:.1f} ms | {forward * 1e3:.0f} ms | {took / forward:.1%} |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench beyond", description=__doc__)
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per figure (>= 3)")
    args = parser.parse_args(argv)
    repeats = max(3, args.repeats)
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    models = {"MiniLM": load_model("minilm"), "SmolLM2": load_model("smollm2")}
    print(f"## Beyond the weights, NumPy engine, one thread\n\nload average {os.getloadavg()}\n")
    print("| model | tokens | forward (ms) | knock-out rerun (ms) | ratio | target <= 1.2 |")
    print("|---|---|---|---|---|---|")
    for name, model in models.items():
        print("\n".join(bench_knock(name, model, repeats)))
    print(
        "\n| model | reruns | importance sweep at 20 tokens | target <= 30 s |\n|---|---|---|---|"
    )
    for name, model in models.items():
        print(bench_sweep(name, model))
    print("\n| model | rollout at 128 | rollout at 512 |\n|---|---|---|")
    for name, model in models.items():
        print(bench_rollout(name, model, repeats))
    print("\n| model | value norms, every layer, 512 tokens | forward | share |\n|---|---|---|---|")
    for name, model in models.items():
        print(bench_norms(name, model, repeats))
    print("\n" + bench_lens(models["SmolLM2"], repeats))
    print(f"\nload average {os.getloadavg()} (at the end)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
