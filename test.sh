#!/usr/bin/env bash
# Command 2: the tests, in tiers (pytest markers, pyproject.toml).
#   ./test.sh            the fast tier: ruff, the formatter, mypy, the JavaScript checks (eslint,
#                        prettier, node --test), then the engine, figures, pages (AppTest), house
#                        checks and notebook (under 5 minutes on 2 cores)
#   ./test.sh --all      also the browser, serving and load tiers: Debian's Chromium against
#                        `streamlit run app.py`, ./serve.sh behind HAProxy, a class of 30 browsers
#                        (installs chromium, haproxy and espeak-ng when missing and run as root)
# Other arguments go to pytest, e.g. ./test.sh -q tests/core, ./test.sh --all -m browser.
set -euo pipefail
cd "$(dirname "$0")"
all=0 args=()
for arg in "$@"; do
  if [ "$arg" = --all ]; then all=1; else args+=("$arg"); fi
done
source scripts/env.sh requirements-dev.txt
if [ "$all" = 1 ]; then
  missing=()
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)
  command -v espeak-ng >/dev/null || missing+=(espeak-ng)  # speaks typed text for Whisper
  if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >/dev/null
  fi
fi
.venv/bin/python -m ruff check .
.venv/bin/python -m ruff format --check .  # the formatter wins: no fmt: skip
.venv/bin/python -m mypy  # strict (pyproject.toml [tool.mypy])
scripts/js.sh  # the explorer's JavaScript: eslint, prettier --check, node --test tests/js
# The fast tier on one worker per core (pytest-xdist). The browser, hostile, serving and load tiers start
# servers and Chromium of their own: they run after it, in one process.
fast=(-n auto -m "not browser and not serve and not load and not hostile")
if [ "$all" = 0 ]; then
  exec .venv/bin/python -m pytest "${fast[@]}" "${args[@]}"
fi
status=0
.venv/bin/python -m pytest "${fast[@]}" "${args[@]}" || status=$?
# exit code 5 (nothing selected, e.g. ./test.sh --all tests/core) is not a failure
.venv/bin/python -m pytest -m "browser or serve or load or hostile" "${args[@]}" || { rc=$?; [ "$rc" = 5 ] || status=$rc; }
exit "$status"
