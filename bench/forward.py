"""``python -m bench forward [--quick] [--cases minilm:128,smollm2:2048]``: the engine's forward
pass against transformers' eager forward, each in its own process as its users run it.

For each case two workers (bench/forward_worker.py) start one after the other, each loading its
model, building the same ids and warming up once; then they take turns, one pass each (A B A B
…), so a change in the machine's load hits both alike; the figures are the medians of each
side's passes and the median of the ratios pair by pair. One thread each (OMP/MKL/OPENBLAS=1,
torch.set_num_threads(1)). Each side keeps its own heap, so neither pays for the other's memory
(run in one process, torch faulted ~34,000 pages a pass at 512 tokens: an anchor slower than a
user's torch). The load average is printed beside every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
READY_TIMEOUT_S = 300.0  # a load and one warm-up pass (SmolLM2 via GGUF: ~17 s to load)
PASS_TIMEOUT_S = 600.0  # one pass (SmolLM2 at 2,048 tokens: ~20 s quiet, ~60 s at load 12)
HIDDEN_ONLY_FROM = 1024  # from this length the anchor returns hidden states only (memory)


@dataclass(frozen=True)
class Case:
    """One comparison: ``model`` (worker key) at ``n`` tokens, ``rounds`` pairs of passes."""

    name: str  # as the table says it
    model: str  # bench.forward_worker.MODELS key
    n: int
    rounds: int

    @property
    def hidden_only(self) -> bool:
        """At 2,048 tokens every attention would hold 30 × 9 × 2,048² floats (4.5 GB)."""
        return self.n >= HIDDEN_ONLY_FROM


CASES = (
    Case("MiniLM", "minilm", 128, 15),
    Case("MiniLM", "minilm", 512, 9),
    Case("SmolLM2", "smollm2", 128, 9),
    Case("SmolLM2", "smollm2", 512, 5),
    Case("SmolLM2", "smollm2", 2048, 3),
)


@dataclass
class Paired:
    """What one case measured: each side's seconds per pass, in the order run, and more."""

    case: Case
    ours_s: list[float] = field(default_factory=list)
    theirs_s: list[float] = field(default_factory=list)
    ours_faults: list[float] = field(default_factory=list)
    theirs_faults: list[float] = field(default_factory=list)
    peak_mb: tuple[float, float] = (0.0, 0.0)  # each process's peak RSS
    load: tuple[tuple[float, ...], tuple[float, ...]] = ((), ())  # before, after

    @property
    def ours(self) -> float:
        return statistics.median(self.ours_s)

    @property
    def theirs(self) -> float:
        return statistics.median(self.theirs_s)

    @property
    def ratio(self) -> float:
        return pair_ratio(self.ours_s, self.theirs_s)


def pair_ratio(ours: Sequence[float], theirs: Sequence[float]) -> float:
    """The median of ours[i] / theirs[i]: each pair ran back to back, so a load change between
    pairs moves both of a pair alike. ValueError when the lists differ in length or are empty."""
    if not ours or len(ours) != len(theirs):
        raise ValueError(f"pairs need equal, non-empty lists: {len(ours)} and {len(theirs)}")
    return statistics.median(a / b for a, b in zip(ours, theirs, strict=True))


def parse_cases(text: str, rounds: int | None) -> list[Case]:
    """``minilm:128,smollm2:2048`` → the matching CASES (``rounds`` overrides theirs);
    ValueError names a case that is not in CASES."""
    known = {f"{c.model}:{c.n}": c for c in CASES}
    picked = []
    for name in filter(None, (s.strip() for s in text.split(","))):
        if name not in known:
            raise ValueError(f"unknown case {name!r}; choose from {', '.join(known)}")
        case = known[name]
        picked.append(Case(case.name, case.model, case.n, rounds or case.rounds))
    return picked


class Worker:
    """One side's process: started, read line by line through a thread (so that every wait is
    bounded), its stderr kept in a file for the error message."""

    def __init__(self, args: Sequence[str]) -> None:
        self.err: IO[str] = tempfile.TemporaryFile("w+")  # noqa: SIM115  (closed with the worker)
        env = {**os.environ, **ONE_THREAD, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.forward_worker", *args],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.err,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put("")

    def read(self, timeout_s: float) -> dict[str, Any]:
        """The next JSON line; RuntimeError (with the worker's stderr) if none comes in time."""
        try:
            line = self.lines.get(timeout=timeout_s)
        except queue.Empty:
            line = ""
        if not line.startswith("{"):
            self.err.seek(0)
            raise RuntimeError(f"forward worker gave {line!r}:\n{self.err.read()[-2000:]}")
        return json.loads(line)  # type: ignore[no-any-return]

    def send(self, word: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(word + "\n")
        self.proc.stdin.flush()

    def close(self) -> float:
        """Ask it to end; its peak RSS in MB (0 if it could not say)."""
        peak = 0.0
        if self.proc.poll() is None:
            try:
                self.send("quit")
                peak = float(self.read(30.0).get("peak_mb", 0.0))
            except (OSError, RuntimeError):
                pass
        try:
            self.proc.wait(timeout=30.0)  # it exits once it has said its peak
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if not self.err.closed:
            self.err.close()
        return peak


def _args(side: str, case: Case) -> list[str]:
    extra = ["--hidden-only"] if side == "transformers" and case.hidden_only else []
    return [side, case.model, str(case.n), *extra]


def measure(case: Case) -> Paired:
    """Start the engine's worker, then transformers'; ``case.rounds`` pairs of passes."""
    got = Paired(case, load=(os.getloadavg(), ()))
    ours = Worker(_args("engine", case))
    theirs: Worker | None = None
    try:
        ours.read(READY_TIMEOUT_S)
        theirs = Worker(_args("transformers", case))
        theirs.read(READY_TIMEOUT_S)
        for _ in range(case.rounds):
            for worker, times, faults in (
                (ours, got.ours_s, got.ours_faults),
                (theirs, got.theirs_s, got.theirs_faults),
            ):
                worker.send("go")
                one = worker.read(PASS_TIMEOUT_S)
                times.append(one["s"])
                faults.append(one["faults"])
    finally:
        got.peak_mb = (ours.close(), theirs.close() if theirs else 0.0)
    got.load = (got.load[0], os.getloadavg())
    return got


def engine_only(case: Case) -> float:
    """The engine's median seconds a pass over ``case.rounds`` passes, alone in its process (an
    anchor for a figure measured elsewhere in the same run, e.g. a page's first chart)."""
    worker = Worker(_args("engine", case))
    times: list[float] = []
    try:
        worker.read(READY_TIMEOUT_S)
        for _ in range(case.rounds):
            worker.send("go")
            times.append(worker.read(PASS_TIMEOUT_S)["s"])
    finally:
        worker.close()
    return statistics.median(times)


def anchor_label(case: Case) -> str:
    """What the anchor returns, said in the row."""
    if case.hidden_only:
        return "transformers eager, hidden states only"
    return "transformers eager, attentions + hidden states"


def describe(got: Paired) -> str:
    """One line per case, with the load beside the figure."""
    c = got.case
    load = f"load {got.load[0][0]:.2f} → {got.load[1][0]:.2f}"
    return (
        f"{c.name} {c.n} tokens: engine {got.ours * 1e3:.1f} ms, {anchor_label(c)} "
        f"{got.theirs * 1e3:.1f} ms, ratio {got.ratio:.2f}× (pair by pair, n={len(got.ours_s)}; "
        f"faults/pass {statistics.median(got.ours_faults):,.0f} / "
        f"{statistics.median(got.theirs_faults):,.0f}; peak RSS {got.peak_mb[0]:.0f} / "
        f"{got.peak_mb[1]:.0f} MB; {load})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench forward", description=__doc__)
    parser.add_argument("--cases", default=",".join(f"{c.model}:{c.n}" for c in CASES))
    parser.add_argument("--rounds", type=int, default=None, help="pairs of passes per case")
    args = parser.parse_args(argv)
    from bench.machine import describe_machine

    print(f"# bench forward: {describe_machine()}", flush=True)
    started = time.monotonic()
    for case in parse_cases(args.cases, args.rounds):
        print(describe(measure(case)), flush=True)
    print(f"{time.monotonic() - started:.0f} s in all; load {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
