"""What one replica holds, step by step, in one process as a replica holds it: RSS and PSS
(/proc/self/smaps_rollup, anonymous and file-backed apart) after the runtime's imports, after
each model loads, after a class's traces (30 short sentences, every third on SmolLM2), and
after glibc's malloc_trim; then SmolLM2's forward at 128 tokens (best of 5).

``python -m bench replica_memory`` (``./bench.sh replica_memory``). Run it under
``MALLOC_ARENA_MAX=2`` and without, and with ``ATTENTION_WEIGHT_CACHE=off`` (weights loaded into
this process's own memory) and without (dequantized weights mapped from the shared cache file),
to see what each saves. PSS counts a page shared by n processes as 1/n: the figure that adds up
across replicas; RSS counts it whole in each.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

from server.memory import release_free_memory

SENTENCES = [
    "The cat sat on the mat because it was tired.",
    "She gave the book to her brother after dinner.",
    "The bank raised its rates while the river rose.",
    "Students often ask why the model looks back at the first word.",
    "A quick brown fox jumps over the lazy dog.",
    "When the rain stopped, the children ran outside to play.",
]


def memory() -> dict[str, float]:
    """This process's Rss, Pss, Pss_Anon and Pss_File in MB (smaps_rollup)."""
    out: dict[str, float] = {}
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("Rss", "Pss", "Pss_Anon", "Pss_File"):
                out[key] = int(rest.split()[0]) / 1024
    return out


def row(step: str, extra: str = "") -> None:
    m = memory()
    cells = "".join(f"{m.get(k, 0.0):>9.0f}" for k in ("Rss", "Pss", "Pss_Anon", "Pss_File"))
    print(f"{step:<44}{cells}  {extra}", flush=True)


def _imports() -> None:
    import pandas  # noqa: F401
    import plotly.graph_objects  # noqa: F401
    import streamlit  # noqa: F401

    import ui.cache
    import ui.warm  # noqa: F401
    import viz.common  # noqa: F401


def _class_traces(models: dict[str, Any]) -> tuple[list[Any], int]:
    from attention_core import WhatIf
    from attention_core.models import family_of
    from server.budget import nbytes

    traces, held = [], 0
    for i in range(30):
        name = "smollm2" if i % 3 == 2 else "minilm"
        text = f"{SENTENCES[i % len(SENTENCES)]} ({i})"
        model = models[name]
        trace = family_of(model).trace_sentence(model, text, WhatIf(), None)
        traces.append(trace)
        held += nbytes(trace)
    return traces, held


def time_smollm2(model: Any) -> float:
    """Best of 5 SmolLM2 forward passes at 128 tokens, in ms."""
    from attention_core import WhatIf
    from attention_core.models import family_of

    family = family_of(model)
    text = " ".join(SENTENCES * 10)
    tokens = family.tokenize(model, text, 128)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        family.run(model, tokens, WhatIf())
        best = min(best, time.perf_counter() - start)
    return best * 1000


PEER_READY_S = 120.0


def peer() -> None:
    """Another replica's share: load the three models, read every weight, say so, and wait
    until the measuring process closes our stdin."""
    from attention_core.models import load_model

    models = [load_model(key) for key in ("minilm", "smollm2", "whisper")]
    for model in models:
        _touch(model.params)
    print("ready", flush=True)
    sys.stdin.read()  # the models stay loaded until then


def _touch(obj: object) -> None:
    from dataclasses import fields, is_dataclass

    import numpy as np

    if isinstance(obj, np.ndarray):
        float(obj.sum())
    elif isinstance(obj, tuple):
        for item in obj:
            _touch(item)
    elif is_dataclass(obj):
        for f in fields(obj):
            _touch(getattr(obj, f.name))


def start_peers(n: int) -> list[subprocess.Popen[str]]:
    """``n`` other processes holding the three models as replicas do, each ready."""
    cmd = [sys.executable, "-c", "from bench.replica_memory import peer; peer()"]
    peers = [
        subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for _ in range(n)
    ]
    for p in peers:
        assert p.stdout is not None
        deadline = time.monotonic() + PEER_READY_S
        while p.stdout.readline().strip() != "ready":
            if time.monotonic() > deadline or p.poll() is not None:
                raise RuntimeError("a peer replica did not load the models")
    return peers


def main(argv: list[str]) -> int:
    """``--peers N``: N other processes hold the three models meanwhile (2 replicas: 1)."""
    from attention_core.models import load_model

    n_peers = int(argv[argv.index("--peers") + 1]) if "--peers" in argv else 0
    peers = start_peers(n_peers) if n_peers else []
    arena = os.environ.get("MALLOC_ARENA_MAX", "unset")
    cache = os.environ.get("ATTENTION_WEIGHT_CACHE", "on")
    print(f"MALLOC_ARENA_MAX={arena}  ATTENTION_WEIGHT_CACHE={cache}")
    print(f"{'step (MB)':<44}{'RSS':>9}{'PSS':>9}{'PSS anon':>9}{'PSS file':>9}")
    row("python + numpy + engine")
    _imports()
    row("+ what app.py imports (Streamlit, pandas, ...)")
    models: dict[str, Any] = {}
    for key in ("minilm", "smollm2", "whisper"):
        start = time.perf_counter()
        models[key] = load_model(key)
        row(f"+ {key} loaded", f"{time.perf_counter() - start:.2f} s")
    traces, held = _class_traces(models)
    row("+ 30 short traces (every third SmolLM2)", f"traces hold {held / 2**20:.1f} MB")
    release_free_memory()
    row("  after malloc_trim")
    ms = time_smollm2(models["smollm2"])
    release_free_memory()
    row("+ SmolLM2 128 tokens x5, trimmed", f"best {ms:.1f} ms")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}  peers: {n_peers}")
    for p in peers:
        p.communicate(timeout=60)
    del traces
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
