#!/usr/bin/env bash
# Run one benchmark in the environment of run.sh and test.sh: ./bench.sh NAME [options]
# (NAME: core, forward, app, first_chart, soak, classroom, llama, decoder, beyond, whisper;
# see bench/__main__.py).
# It installs what the benchmarks need (requirements-dev.txt: the oracles, Playwright, BertViz)
# the first time.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/env.sh requirements-dev.txt
exec .venv/bin/python -m bench "$@"
