"""``./bench.sh <name> [args]`` (``python -m bench`` in the shared environment): run one
benchmark; each is a module with ``main(argv)``."""

from __future__ import annotations

import importlib
import sys

BENCHMARKS = {
    "core": "bench.core",  # the NumPy engine: forward pass and attention steps
    "app": "bench.app",  # the running app in Chromium, against the targets, and BertViz
    "soak": "bench.soak",  # server memory over many sentences through every page
    "arrivals": "bench.arrivals",  # students one after another through serve.sh: CPU per arrival
    "browser_floor": "bench.browser_floor",  # a first visit's browser CPU beside the server's
    "class_protocol": "bench.class_protocol",  # a class as protocol clients: the server's side
    "classroom": "bench.classroom",  # 30 browsers through serve.sh, a heavy visitor, per replica
    "forward": "bench.forward",  # engine vs transformers forward, each in its own process
    "first_chart": "bench.first_chart",  # new sentence → first chart: server steps, 2,048 tokens
    "explorer_map": "bench.explorer_map",  # map mode in Chromium: head switch, zoom (512, 2,048)
    "llama": "bench.llama",  # SmolLM2 engine: load, forward vs transformers, step, memory
    "decoder": "bench.decoder",  # SmolLM2 in the app: new prompt, generation step, memory
    "beyond": "bench.beyond",  # norm-weighted, rollout, knock-out and its sweep, logit lens
    "whisper": "bench.whisper",  # Whisper tiny.en: encoder vs transformers, a clip, trace, memory
    "roles": "bench.roles",  # head roles (both models, 128 tokens) and the induction probe
    "listen": "bench.listen",  # the Listen page in Chromium: a new 5 s clip heard and drawn
    "replica_memory": "bench.replica_memory",  # one replica's RSS and PSS, step by step
    "report": "bench.table",  # all of the above in one run: the performance table, written to docs
}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in BENCHMARKS:
        print(f"usage: python -m bench {{{','.join(BENCHMARKS)}}} [options]", file=sys.stderr)
        return 2
    module = importlib.import_module(BENCHMARKS[argv[0]])
    return module.main(argv[1:]) or 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
