"""Measure the shape of the app code: long modules, long functions, import cycles, private names
imported across modules, and imports that point the wrong way between the layers; and the
explorer's JavaScript (``explorer/js/*.js``): long modules and long functions there too.

``python -m scripts.house`` prints every finding and exits 1 if there is one;
``tests/test_house.py`` asserts the same. The app code is everything but tests/, bench/, scripts/
and deploy/.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIP = {"tests", "bench", "scripts", "deploy", ".venv", "docs", ".git"}
MAX_MODULE_LINES = 300
MAX_FUNCTION_LINES = 50

# Which app packages each layer may import (ARCHITECTURE.md: imports point one way only).
ALLOWED = {
    "attention_core": {"attention_core"},
    "viz": {"viz", "attention_core"},
    "explorer": {"explorer", "attention_core"},
    "references": {"references", "attention_core"},  # what the verify buttons check against
    "ui": {"ui", "viz", "explorer", "server", "attention_core", "references"},
    "pages": {"ui", "viz", "explorer", "attention_core"},
    "app": {"ui", "viz", "server"},  # app.py assembles the ASGI app: pages, routes, middleware
    "navigation": {"ui"},
    "server": {"server", "explorer", "attention_core"},
}
ENGINE_FORBIDDEN = {"streamlit", "plotly"}
NO_UI = ("attention_core", "references")  # packages that never import ENGINE_FORBIDDEN


@dataclass(frozen=True)
class Module:
    name: str  # dotted, e.g. "ui.tour.block"
    path: Path
    rel: str  # the path from the tree's root
    tree: ast.Module
    n_lines: int


def app_modules(root: Path = ROOT) -> list[Module]:
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] in SKIP:
            continue
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        text = path.read_text()
        found.append(
            Module(".".join(parts), path, str(rel), ast.parse(text), len(text.splitlines()))
        )
    return found


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node but those under ``if TYPE_CHECKING:`` (imports for annotations only: they never
    run, so they make no cycle and cross no layer at run time)."""
    out, queue = [], deque([tree])  # breadth first, in ast.walk's order
    while queue:
        node = queue.popleft()
        out.append(node)
        queue.extend(c for c in ast.iter_child_nodes(node) if not _is_type_checking(c))
    return out


def _imports(module: Module, names: set[str]) -> list[tuple[str, list[str]]]:
    """(imported app module, names taken from it) for each import of an app module."""
    out: list[tuple[str, list[str]]] = []
    package = module.name if module.path.name == "__init__.py" else module.name.rpartition(".")[0]
    for node in _runtime_nodes(module.tree):
        if isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.append((sub, []) if sub in names else (base, [alias.name]))
    return out


def long_modules(modules: list[Module]) -> list[str]:
    return [f"{m.rel}: {m.n_lines} lines" for m in modules if m.n_lines > MAX_MODULE_LINES]


def long_functions(modules: list[Module]) -> list[str]:
    found = []
    for m in modules:
        for node in ast.walk(m.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    found.append(f"{m.rel}:{node.lineno} {node.name}: {n} lines")
    return found


def import_graph(modules: list[Module]) -> dict[str, set[str]]:
    names = {m.name for m in modules}
    graph: dict[str, set[str]] = {}
    for m in modules:
        targets = set()
        for target, _ in _imports(m, names):
            # "from ui import router" names ui.router; "import ui" names the package.
            while target and target not in names:
                target = target.rpartition(".")[0]
            if target and target != m.name:
                targets.add(target)
        graph[m.name] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[str]:
    """Each strongly connected group of more than one module (Tarjan), as one line.
    A package's __init__ that re-exports its own submodules is not a cycle of the code."""
    edges = {
        a: {b for b in bs if not b.startswith(a + ".") and not a.startswith(b + ".")}
        for a, bs in graph.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return [" <-> ".join(g) for g in groups]


def private_imports(modules: list[Module]) -> list[str]:
    names = {m.name for m in modules}
    found = []
    for m in modules:
        for target, taken in _imports(m, names):
            for name in taken:
                if name.startswith("_") and target != m.name:
                    found.append(f"{m.name} imports {target}.{name}")
    return found


def wrong_way(modules: list[Module]) -> list[str]:
    names = {m.name for m in modules}
    found = []
    for m in modules:
        layer = m.name.split(".")[0]
        allowed = ALLOWED.get(layer)
        for target, _ in _imports(m, names):
            top = target.split(".")[0]
            engine_ui = layer in NO_UI and top in ENGINE_FORBIDDEN
            if engine_ui or (allowed is not None and top in ALLOWED and top not in allowed):
                found.append(f"{m.name} imports {target}")
    return found


# The engine's floors, lowest first: a module imports from its own floor or lower ones only,
# annotations included (attention_core/__init__ and __main__ stand above them all), and a
# family's folder never imports another family's.
FLOORS = ("core", "models", "methods", "lessons")
REGISTRY = "attention_core.models"  # the one module that picks a family


def _floor(name: str) -> int | None:
    parts = name.split(".")
    if parts[0] != "attention_core" or len(parts) < 2 or parts[1] not in FLOORS:
        return None
    return FLOORS.index(parts[1])


def _family(name: str) -> str | None:
    """The family folder of an engine module ("attention_core.models.llama.forward" -> llama)."""
    parts = name.split(".")
    is_folder = parts[:2] == ["attention_core", "models"] and len(parts) > 3
    return parts[2] if is_folder else None


def _all_imports(module: Module) -> list[str]:
    """Every attention_core module or package ``module`` names in an import, annotations too."""
    out = []
    for node in ast.walk(module.tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names]
    return [n for n in out if n.startswith("attention_core.")]


def floors_down(modules: list[Module]) -> list[str]:
    """Engine imports that run up a floor, or from one family's folder into another's."""
    known = {m.name for m in modules}
    found = []
    for m in modules:
        mine, family = _floor(m.name), _family(m.name)
        for target in dict.fromkeys(t for t in _all_imports(m) if t in known):
            theirs, other = _floor(target), _family(target)
            if mine is not None and theirs is not None and theirs > mine:
                found.append(f"{m.name} imports {target} (a floor up)")
            elif family and other and other != family:
                found.append(f"{m.name} imports {target} (another family)")
    return found


def _family_test(node: ast.AST) -> bool:
    """``isinstance(x, <a family's model or trace>)``, or ``.family`` compared with a name."""
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance":
        kinds = node.args[1] if len(node.args) > 1 else None
        names = [getattr(k, "id", getattr(k, "attr", "")) for k in getattr(kinds, "elts", [kinds])]
        return any(re.fullmatch(r"(Llama|Whisper|Bert)?(Model|Trace)", n or "") for n in names)
    if isinstance(node, ast.Compare):
        sides = [node.left, *node.comparators]
        return any(isinstance(s, ast.Attribute) and s.attr == "family" for s in sides)
    return False


def family_tests(modules: list[Module]) -> list[str]:
    """Places outside the registry that pick a family by its type or name."""
    return [
        f"{m.rel}:{getattr(node, 'lineno', 0)}"
        for m in modules
        if m.name != REGISTRY
        for node in ast.walk(m.tree)
        if _family_test(node)
    ]


JS_DIR = Path("explorer", "js")
# Strings, template literals and comments: blanked before braces are counted.
JS_NOISE = re.compile(
    r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|`(?:\\.|[^`\\])*`|//[^\n]*|/\*[\s\S]*?\*/'
)
PARAMS = r"\((?:[^()]|\([^()]*\))*\)"  # a parameter list, one level of parentheses inside
JS_FUNCTION = re.compile(
    rf"\bfunction\b[^(]*{PARAMS}\s*\{{"  # function f(...) {, function (...) {
    r"|=>\s*\{"  # (...) => {
    r"|^[ \t]*(?:async\s+|static\s+)?(?!(?:if|for|while|switch|catch|return|function)\b)"
    rf"[\w$]+\s*{PARAMS}\s*\{{",  # a method: name(...) {
    re.M,
)


def js_modules(root: Path = ROOT) -> list[tuple[str, str]]:
    """(path from the root, text) of every explorer/js module."""
    return [(str(p.relative_to(root)), p.read_text()) for p in sorted((root / JS_DIR).glob("*.js"))]


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match[0])  # same length, newlines kept


def js_functions(text: str) -> list[tuple[int, int]]:
    """(first line, lines of code) of every function in ``text``, nested ones too, counted as
    eslint's max-lines-per-function with skipBlankLines and skipComments counts them: from its
    line to its closing brace's, blank and comment-only lines left out. A simple brace matcher
    over the text with strings and comments blanked; eslint is the precise one."""
    code = JS_NOISE.sub(_blank, text)
    lines = code.split("\n")
    found = []
    for match in JS_FUNCTION.finditer(code):
        depth, at = 0, match.end() - 1
        for at in range(match.end() - 1, len(code)):
            depth += {"{": 1, "}": -1}.get(code[at], 0)
            if depth == 0:
                break
        first, last = code.count("\n", 0, match.start()), code.count("\n", 0, at)
        found.append((first + 1, sum(1 for line in lines[first : last + 1] if line.strip())))
    return found


def long_js(root: Path = ROOT) -> tuple[list[str], list[str]]:
    """JS modules over MAX_MODULE_LINES lines and JS functions over MAX_FUNCTION_LINES."""
    modules, functions = [], []
    for rel, text in js_modules(root):
        n_lines = len(text.splitlines())
        if n_lines > MAX_MODULE_LINES:
            modules.append(f"{rel}: {n_lines} lines")
        for line, n in js_functions(text):
            if n > MAX_FUNCTION_LINES:
                functions.append(f"{rel}:{line}: {n} lines")
    return modules, functions


def report(root: Path = ROOT) -> dict[str, list[str]]:
    modules = app_modules(root)
    js_long_modules, js_long_functions = long_js(root)
    return {
        f"modules over {MAX_MODULE_LINES} lines": long_modules(modules),
        f"functions over {MAX_FUNCTION_LINES} lines": long_functions(modules),
        f"JS modules over {MAX_MODULE_LINES} lines": js_long_modules,
        f"JS functions over {MAX_FUNCTION_LINES} lines": js_long_functions,
        "import cycles": cycles(import_graph(modules)),
        "private names imported from another module": private_imports(modules),
        "imports against the layers": wrong_way(modules),
        "engine imports up a floor or across families": floors_down(modules),
        "family tests outside the registry": family_tests(modules),
    }


def main() -> int:
    modules = app_modules()
    longest = max(modules, key=lambda m: m.n_lines)
    print(f"{len(modules)} app modules, longest {longest.rel} ({longest.n_lines} lines)")
    js = js_modules()
    if js:
        rel, text = max(js, key=lambda m: len(m[1].splitlines()))
        print(f"{len(js)} JS modules, longest {rel} ({len(text.splitlines())} lines)")
    failed = False
    for title, rows in report().items():
        print(f"{title}: {len(rows)}")
        for row in rows:
            print(f"  {row}")
        failed |= bool(rows)
    return int(failed)


if __name__ == "__main__":
    sys.exit(main())
