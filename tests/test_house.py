"""The shape of the app code (issue 13), measured by scripts/house.py on the real tree: modules
of at most 300 lines, functions of at most 50 (Python, and explorer/js's JavaScript), no import
cycle, no private name imported from another module, imports that point one way between the
layers. Each check is also run on a small tree that breaks it, so that none of them passes by
finding nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts import house


def test_the_app_code_measures_as_the_issue_asks():
    found = house.report()
    assert found == {title: [] for title in found}, found


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


BROKEN = {
    "long modules": {"ui/long.py": "x = 1\n" * 301},
    "long functions": {"ui/f.py": "def f():\n" + "    x = 1\n" * 50},
    "cycles": {"ui/a.py": "from ui import b\n", "ui/b.py": "from ui.a import thing\n"},
    "private imports": {
        "attention_core/a.py": "from attention_core.b import _secret\n",
        "attention_core/b.py": "_secret = 1\n",
    },
    "long JS modules": {"explorer/js/long.js": "const x = 1;\n" * 301},
    "long JS functions": {
        "explorer/js/f.js": "export function f() {\n" + "  g();\n" * 50 + "}\n",
    },
    "layers": {
        "attention_core/a.py": "import streamlit\nfrom ui import cache\n",
        "references/r.py": "import plotly\n",
        "ui/cache.py": "x = 1\n",
    },
    "floors": {
        "attention_core/core/a.py": "from attention_core.methods.b import f\n",
        "attention_core/methods/b.py": "def f(): pass\n",
        "attention_core/models/llama/c.py": "from attention_core.models.bert.d import g\n",
        "attention_core/models/bert/d.py": "def g(): pass\n",
    },
    "family tests": {
        "ui/a.py": "def f(m, cfg):\n    return isinstance(m, LlamaModel) or cfg.family == 'bert'\n",
    },
}


@pytest.mark.parametrize("kind", list(BROKEN))
def test_each_check_finds_what_breaks_it(tmp_path, kind):
    found = house.report(_tree(tmp_path, BROKEN[kind]))
    assert sum(map(len, found.values())) >= 1, (kind, found)
    if kind == "floors":
        assert found["engine imports up a floor or across families"] == [
            "attention_core.core.a imports attention_core.methods.b (a floor up)",
            "attention_core.models.llama.c imports attention_core.models.bert.d (another family)",
        ]
    if kind == "family tests":
        assert found["family tests outside the registry"] == ["ui/a.py:2", "ui/a.py:2"]
    if kind == "layers":
        assert found["imports against the layers"] == [
            "attention_core.a imports streamlit",
            "attention_core.a imports ui.cache",
            "references.r imports plotly",
        ]


def test_imports_for_annotations_only_make_no_cycle(tmp_path):
    # `if TYPE_CHECKING:` imports never run; a lazy import inside a function does.
    guarded = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ui.a import A\n"
    found = house.report(_tree(tmp_path, {"ui/a.py": "from ui import b\n", "ui/b.py": guarded}))
    assert not any(found.values()), found
    lazy = "def f():\n    from ui.a import A\n"
    found = house.report(
        _tree(tmp_path / "lazy", {"ui/a.py": "from ui import b\n", "ui/b.py": lazy})
    )
    assert found["import cycles"], found


def test_js_functions_are_measured_by_their_braces_not_their_strings():
    text = (
        "// a comment with a { brace\n"
        "export function outer(a, { b }) {\n"
        '  const s = "}}}";  // and } here\n'
        "  const t = `${a} {`;\n"
        "\n"
        "  items.forEach((x) => {\n"
        "    use(x, '{');\n"
        "  });\n"
        "  return s + t;\n"
        "}\n"
        "class C {\n"
        "  peek(key) {\n"
        "    return key;\n"
        "  }\n"
        "}\n"
    )
    # outer: lines 2-10 less the blank one; the arrow: 6-8; the method: 12-14
    assert house.js_functions(text) == [(2, 8), (6, 3), (12, 3)]


def test_js_long_functions_are_named_by_file_and_line(tmp_path):
    body = "const a = 1;\n\nfunction f() {\n" + "  // why\n  g();\n" * 50 + "}\n"
    found = house.report(_tree(tmp_path, {"explorer/js/f.js": body}))
    assert found["JS functions over 50 lines"] == ["explorer/js/f.js:3: 52 lines"]
