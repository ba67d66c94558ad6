#!/usr/bin/env bash
# The JavaScript checks: eslint, prettier --check and node's own test runner on tests/js/ (which
# also rebuilds the explorer's bundles with esbuild and fails when a committed one in
# explorer/dist/ is stale: `npm run build` writes them).
# Installs the pinned tools (package-lock.json) into node_modules/ the first time, and again
# whenever package-lock.json changes; installs Debian's nodejs and npm when node is missing and
# we are root (as test.sh does for Chromium). Nothing here runs in the app.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm) >/dev/null
  else
    echo "scripts/js.sh: node and npm are needed (apt-get install nodejs npm)" >&2
    exit 1
  fi
fi
stamp=node_modules/.package-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -d node_modules ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" >"$stamp"
fi
npx --no-install eslint .
npx --no-install prettier --check explorer/js explorer/build.js explorer/explorer.css tests/js eslint.config.js
node --test tests/js/
