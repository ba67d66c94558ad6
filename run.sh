#!/usr/bin/env bash
# Command 1: install what the app needs into .venv (first time only) and start it on the
# packaged all-MiniLM-L6-v2. Extra arguments go to `streamlit run`, e.g. --server.port 8600.
set -euo pipefail
cd "$(dirname "$0")"
scripts/venv.sh requirements.txt
# One BLAS thread per run: on 2 shared cores a multi-threaded BLAS spins against the other
# sessions and slows each trace 10x or more; set OPENBLAS_NUM_THREADS yourself to override.
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}" OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
# Two malloc arenas instead of one per session thread: 10 sessions at 128 tokens measured
# 579 MB instead of 611 MB resident.
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
export HF_HUB_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1
exec .venv/bin/python -m streamlit run app.py "$@"
