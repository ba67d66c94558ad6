"""The explorer's JavaScript as one ES module, assembled from the small modules in ``js/``.

``module(entry)`` starts at ``js/<entry>.js``, follows its relative imports (``import { a, b }
from "./x.js"``) and joins every module it reaches, each after the ones it imports, into one
self-contained module: the import lines go, ``export`` goes from the named exports, and only
the entry keeps its ``export default``. No build step, no node and no network at run time. It
refuses what a plain join would get wrong: an import cycle, an import that is not a relative
``.js`` path, a renamed or default or namespace import, and two modules defining the same
top-level name (they would share one scope).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

JS = Path(__file__).parent / "js"
IMPORT = re.compile(
    r"^import\s+(?P<what>[^;\"']*?)\s*from\s*[\"'](?P<path>[^\"']+)[\"'];?[ \t]*\n?", re.M
)
BARE_IMPORT = re.compile(r"^import\s*[\"'(]", re.M)
DECLARED = re.compile(
    r"^(?:export\s+)?(?:async\s+)?(?:function\*?|class|const|let|var)\s+([\w$]+)", re.M
)
DESTRUCTURED = re.compile(r"^(?:export\s+)?(?:const|let|var)\s*[\[{]", re.M)
NAMED_EXPORT = re.compile(r"^export\s+(?=(?:async\s+)?(?:function|class|const|let|var)\b)", re.M)
EXPORT_DEFAULT = re.compile(r"^export\s+default\b", re.M)
EXPORT_LIST = re.compile(r"^export\s*[{*]", re.M)
NAME = re.compile(r"^[A-Za-z_$][\w$]*$")


class BundleError(ValueError):
    """The modules cannot be joined into one (the message says which and why)."""


@dataclass(frozen=True)
class Source:
    path: Path
    text: str  # without its import lines
    imports: tuple[tuple[Path, tuple[str, ...]], ...]  # (module, names taken from it)
    names: tuple[str, ...]  # every top-level name it declares
    exported: frozenset[str]


def _imported_names(what: str, where: str) -> tuple[str, ...]:
    inner = re.fullmatch(r"\{(.*)\}", what.strip(), re.S)
    if not inner:
        raise BundleError(f"{where}: only `import {{ names }} from` is supported, not {what!r}")
    names = tuple(n.strip() for n in inner[1].split(",") if n.strip())
    for name in names:
        if not NAME.match(name):
            raise BundleError(f"{where}: renamed import {name!r} is not supported")
    return names


def _parse(path: Path) -> Source:
    text = path.read_text()
    rel = path.name
    if BARE_IMPORT.search(text):
        raise BundleError(f"{rel}: an import without names (or a dynamic import) is not supported")
    if EXPORT_LIST.search(text):
        raise BundleError(f"{rel}: `export {{ … }}` / `export *` lists are not supported")
    if DESTRUCTURED.search(text):
        raise BundleError(f"{rel}: a destructuring top-level declaration is not supported")
    imports = []
    for found in IMPORT.finditer(text):
        target = found["path"]
        if not target.startswith(("./", "../")) or not target.endswith(".js"):
            raise BundleError(f"{rel}: import {target!r} is not a relative .js path")
        names = _imported_names(found["what"], rel)
        imports.append(((path.parent / target).resolve(), names))
    declared = tuple(DECLARED.findall(text))
    exported = frozenset(m[1] for m in DECLARED.finditer(text) if m[0].startswith("export"))
    return Source(path, IMPORT.sub("", text), tuple(imports), declared, exported)


def _order(entry: Path) -> list[Source]:
    """Every module reachable from ``entry``, each after the modules it imports."""
    done: dict[Path, Source] = {}
    visiting: list[Path] = []

    def visit(path: Path) -> None:
        if path in done:
            return
        if path in visiting:
            loop = [p.name for p in visiting[visiting.index(path) :]] + [path.name]
            raise BundleError(f"import cycle: {' -> '.join(loop)}")
        if not path.is_file():
            raise BundleError(f"no module {path}")
        visiting.append(path)
        source = _parse(path)
        for target, names in source.imports:
            visit(target)
            missing = set(names) - done[target].exported
            if missing:
                raise BundleError(
                    f"{path.name} imports {sorted(missing)} not exported by {target.name}"
                )
        visiting.pop()
        done[path] = source

    visit(entry.resolve())
    return list(done.values())


def _check_names(sources: list[Source]) -> None:
    owner: dict[str, str] = {}
    for source in sources:
        for name in source.names:
            if name in owner and owner[name] != source.path.name:
                both = f"{owner[name]} and {source.path.name}"
                raise BundleError(f"top-level name {name!r} is defined in both {both}")
            owner[name] = source.path.name


def assemble(entry: Path) -> str:
    """The one ES module for the entry file ``entry`` (see the module's docstring)."""
    sources = _order(entry)
    _check_names(sources)
    parts = [
        f"// Assembled by explorer/bundle.py from explorer/js/ (entry {entry.name}); do not edit.\n"
    ]
    for source in sources:
        text = NAMED_EXPORT.sub("", source.text)
        defaults = len(EXPORT_DEFAULT.findall(text))
        if source.path != entry.resolve() and defaults:
            raise BundleError(f"{source.path.name}: only the entry may have an `export default`")
        if source.path == entry.resolve() and defaults != 1:
            raise BundleError(f"{source.path.name}: the entry needs exactly one `export default`")
        parts.append(f"// ---- {source.path.name} ----\n{text.strip()}\n")
    return "\n".join(parts)


# Worst case: one entry per adapter (streamlit, widget): 2 × the whole explorer's source, < 200 kB.
@lru_cache(maxsize=4)
def module(entry: str) -> str:
    """``explorer/js/<entry>.js`` and everything it imports as one self-contained ES module."""
    return assemble(JS / f"{entry}.js")
