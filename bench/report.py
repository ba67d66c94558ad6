"""Small statistics and markdown tables for the benchmarks' printed reports."""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Callable, Sequence

_START = time.monotonic()


def progress(message: str) -> None:
    """One progress line with the seconds since the benchmark started."""
    print(f"  [{time.monotonic() - _START:4.0f} s] {message}", flush=True)


def load() -> str:
    """The 1, 5 and 15 minute load averages (other work on the machine skews every timing)."""
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def p50(xs: Sequence[float]) -> float:
    return statistics.median(xs)


def p95(xs: Sequence[float]) -> float:
    """Nearest-rank 95th percentile (the maximum for fewer than 20 samples)."""
    ordered = sorted(xs)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def fmt_s(xs: Sequence[float | None], stat: Callable = p50) -> str:
    ok = [x for x in xs if x is not None]
    if not ok:
        return "n/a"
    missed = f" ({len(xs) - len(ok)} timed out)" if len(ok) < len(xs) else ""
    value = stat(ok)
    return (f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s") + missed


def fmt_bytes(n: float) -> str:
    return f"{n / 1e6:.2f} MB" if n >= 1e5 else f"{n / 1e3:.1f} kB"


def verdict(value: float | None, limit: float) -> str:
    return "n/a" if value is None else ("met" if value <= limit else "MISSED")


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]], note: str = "") -> None:
    print(f"\n### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    if note:
        print(f"\n{note}")
