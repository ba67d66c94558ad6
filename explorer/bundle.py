"""The explorer's JavaScript as one ES module per entry, built ahead of time and committed.

``module(entry)`` is the text of ``explorer/dist/<entry>.js``: ``explorer/js/<entry>.js`` and
every module it imports, bundled by esbuild (``explorer/build.js``, esbuild's exact version
pinned in package.json) into one self-contained ES module whose only export is the entry's
default, each module keeping its own scope (two may use the same top-level name). Format esm,
not minified, no legal comments, fixed flags: the same sources give the same bytes.

The bundles are committed: the app reads them here and needs neither node nor a build step, only
the Python venv. ``npm run build`` writes them after a change under ``explorer/js/``;
``scripts/js.sh`` (tests/js/bundle.test.js) rebuilds them and fails when a committed one differs
from the fresh build, byte for byte.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

DIST = Path(__file__).parent / "dist"
ENTRIES = ("streamlit", "widget")  # explorer/build.js's ENTRIES: one bundle each


# Worst case 2 entries × 100 kB of text (the bundles are 93 and 57 kB) = 200 kB.
@lru_cache(maxsize=len(ENTRIES))
def module(entry: str) -> str:
    """``explorer/js/<entry>.js`` and everything it imports as one self-contained ES module (the
    committed ``explorer/dist/<entry>.js``). An entry without a bundle is a ValueError."""
    if entry not in ENTRIES:
        raise ValueError(f"no bundle for {entry!r}: the entries are {', '.join(ENTRIES)}")
    path = DIST / f"{entry}.js"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: `npm run build` writes it")
    return path.read_text(encoding="utf-8")
