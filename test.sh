#!/usr/bin/env bash
# Command 2: install what the tests need into .venv (first time only), Debian's Chromium and HAProxy
# for the browser and serving tests when missing, then run the whole suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")"
scripts/venv.sh requirements-dev.txt
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >/dev/null
fi
# One BLAS thread per run: on 2 shared cores a multi-threaded BLAS spins against the other
# sessions and slows each trace 10x or more; set OPENBLAS_NUM_THREADS yourself to override.
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}" OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
export HF_HUB_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1 TOKENIZERS_PARALLELISM=false
.venv/bin/python -m ruff check .
.venv/bin/python -m ruff format --check .  # the formatter wins: no fmt: skip
.venv/bin/python -m mypy  # attention_core, strict (pyproject.toml)
exec .venv/bin/python -m pytest "$@"
