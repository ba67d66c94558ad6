"""``python -m bench roles [--repeats N] [--profile]``: head roles and the induction probe in the
NumPy engine, one BLAS thread (OMP/OPENBLAS/MKL_NUM_THREADS=1), figures beside their targets (a
missed target is reported, never raised). Medians of ``--repeats`` runs (7); ``cat
/proc/loadavg`` is printed before and after.

  roles    ``role_scores`` of a 128-token sentence's pass: every head's six or seven scores and the
           even spread's. MiniLM's trace holds its patterns, so this is the arithmetic alone;
           SmolLM2's trace computes a layer's patterns when first read, so each run takes a
           fresh pass (timed apart, "pass") and times ``role_scores`` over its lazily computed
           layers ("roles", what a page waits for after the pass), and the arithmetic again on
           the same, now computed, layers ("arithmetic"). Targets: <= 60 ms MiniLM, <= 400 ms
           SmolLM2.
  probe    ``run_probe`` on SmolLM2 (50 random tokens read twice: the pass, every head's
           scores, the per-token loss). Target <= 1 s.

``--profile`` (or a missed target) prints cProfile's top functions of SmolLM2's roles.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

from attention_core import WhatIf, load_model, run_model, tokenize
from attention_core.methods.induction import run_probe
from attention_core.methods.roles import role_scores
from bench.sentences import sentence

N_TOKENS = 128
TARGET_MS = {"MiniLM": 60.0, "SmolLM2": 400.0}
PROBE_TARGET_S = 1.0


def loadavg() -> str:
    """``cat /proc/loadavg``."""
    return Path("/proc/loadavg").read_text().strip()


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(seconds, result) of one call."""
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def verdict(value: float, target: float) -> str:
    return "ok" if value <= target else "MISS"


def held(trace: Any) -> Any:
    """The fields role_scores reads, every layer's patterns computed and held (the arithmetic
    alone, without a decoder's layers computed on demand)."""
    names = ("tokens", "config", "whatif", "n_tokens")
    return SimpleNamespace(
        pattern_lhqk=np.asarray(trace.pattern_lhqk),
        **{name: getattr(trace, name) for name in names},
    )


def median_ms(fn: Callable[[], Any], repeats: int) -> float:
    return statistics.median(timed(fn)[0] for _ in range(repeats)) * 1e3


def bench_encoder(model: Any, repeats: int) -> tuple[str, float]:
    """MiniLM: role_scores on one trace (its patterns are held), median of ``repeats``."""
    trace = run_model(model, tokenize(model, sentence(model, N_TOKENS)), WhatIf())
    role_scores(trace)  # warm
    ms = median_ms(lambda: role_scores(trace), repeats)
    target = TARGET_MS["MiniLM"]
    row = f"| MiniLM | {trace.n_tokens} | (held) | {ms:.1f} | {ms:.1f} |"
    return f"{row} ≤ {target:.0f} ms {verdict(ms, target)} |", ms


def bench_decoder(model: Any, repeats: int) -> tuple[str, float]:
    """SmolLM2: per run a fresh pass (timed), then role_scores computing its layers (timed);
    and the arithmetic alone on one pass's layers held."""
    tokens = tokenize(model, sentence(model, N_TOKENS))
    role_scores(run_model(model, tokens, WhatIf()))  # warm
    passes, roles = [], []
    for _ in range(repeats):
        took, trace = timed(lambda: run_model(model, tokens, WhatIf()))
        passes.append(took)
        roles.append(timed(lambda t=trace: role_scores(t))[0])
    kept = held(trace)
    arithmetic = median_ms(lambda: role_scores(kept), repeats)
    p, r = (statistics.median(x) * 1e3 for x in (passes, roles))
    target = TARGET_MS["SmolLM2"]
    row = f"| SmolLM2 | {len(tokens)} | {p:.0f} | {r:.0f} | {arithmetic:.1f} |"
    return f"{row} ≤ {target:.0f} ms {verdict(r, target)} |", r


def profile_decoder(model: Any) -> str:
    """cProfile's top 12 functions (cumulative) of role_scores over a fresh SmolLM2 pass."""
    trace = run_model(model, tokenize(model, sentence(model, N_TOKENS)), WhatIf())
    profiler = cProfile.Profile()
    profiler.runcall(role_scores, trace)
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(12)
    return out.getvalue()


def bench_probe(model: Any, repeats: int) -> float:
    """run_probe on SmolLM2 at n=50, median seconds."""
    run_probe(model)  # warm
    return statistics.median(timed(lambda: run_probe(model))[0] for _ in range(repeats))


def cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench roles", description=__doc__)
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per figure (>= 3)")
    parser.add_argument("--profile", action="store_true", help="profile SmolLM2's roles")
    args = parser.parse_args(argv)
    repeats = max(3, args.repeats)
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    minilm, smollm2 = load_model("minilm"), load_model("smollm2")
    print(f"## Head roles and the induction probe, one thread\n\n{cpu_name()}")
    print(f"loadavg {loadavg()}\n")
    print("| model | tokens | pass (ms) | roles (ms) | arithmetic (ms) | target |")
    print("|---|---|---|---|---|---|")
    row, _ = bench_encoder(minilm, repeats)
    print(row)
    row, decoder_ms = bench_decoder(smollm2, repeats)
    print(row)
    probe_s = bench_probe(smollm2, repeats)
    print(
        f"\nrun_probe, SmolLM2, 50 tokens read twice: {probe_s * 1e3:.0f} ms "
        f"(≤ {PROBE_TARGET_S:.0f} s {verdict(probe_s, PROBE_TARGET_S)})"
    )
    if args.profile or decoder_ms > TARGET_MS["SmolLM2"]:
        print("\n" + profile_decoder(smollm2))
    print(f"\nloadavg {loadavg()} (at the end)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
