"""explorer/bundle.py: the explorer's ES modules joined into one module without imports. The real
entries are checked by node itself (``node --check``); each refusal on a small tree of its own."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from explorer import bundle

NODE = shutil.which("node")
ENTRIES = ("streamlit", "widget")


@pytest.mark.parametrize("entry", ENTRIES)
def test_each_entry_is_one_module_with_one_default_export_and_no_import(entry):
    text = bundle.module(entry)
    assert not re.search(r"^\s*import\b", text, re.M)
    assert len(re.findall(r"^export\b", text, re.M)) == 1
    assert len(re.findall(r"^export default\b", text, re.M)) == 1
    assert "globalThis" not in text
    modules = re.findall(r"^// ---- (\S+) ----$", text, re.M)
    assert modules[-1] == f"{entry}.js"
    assert {"stages.js", "state.js", "source.js", "view.js"} <= set(modules)
    # dependency order: a module comes after every module it imports
    for name in modules:
        imported = re.findall(r'from "\./([\w]+\.js)"', (bundle.JS / name).read_text())
        assert all(modules.index(dep) < modules.index(name) for dep in imported), name


@pytest.mark.skipif(NODE is None, reason="node is not installed (scripts/js.sh installs it)")
@pytest.mark.parametrize("entry", ENTRIES)
def test_node_accepts_the_bundle_as_an_es_module(tmp_path, entry):
    path = tmp_path / f"{entry}.mjs"
    path.write_text(bundle.module(entry))
    done = subprocess.run([NODE, "--check", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(NODE is None, reason="node is not installed (scripts/js.sh installs it)")
def test_the_bundled_module_runs_and_exports_what_the_entry_exports(tmp_path):
    # A bundle of small modules imported by node: the functions from other modules work inside.
    root = _tree(
        tmp_path,
        {
            "a.js": "export const TWO = 2;\nexport function twice(x) {\n  return TWO * x;\n}\n",
            "b.js": 'import {\n  twice,\n  TWO,\n} from "./a.js";\n'
            "export function four() {\n  return twice(TWO);\n}\n",
            "entry.js": 'import { four } from "./b.js";\nexport default { four };\n',
        },
    )
    path = tmp_path / "out.mjs"
    path.write_text(bundle.assemble(root / "entry.js"))
    script = f"import m from {str(path)!r}; console.log(m.four());"
    done = subprocess.run(
        [NODE, "--input-type=module", "-e", script], capture_output=True, text=True
    )
    assert done.stdout.strip() == "4", done.stderr


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


BROKEN = {
    "import cycle: a.js -> b.js -> a.js": {
        "entry.js": 'import { a } from "./a.js";\nexport default a;\n',
        "a.js": 'import { b } from "./b.js";\nexport const a = 1;\n',
        "b.js": 'import { a } from "./a.js";\nexport const b = 2;\n',
    },
    "is not a relative .js path": {
        "entry.js": 'import { x } from "lodash";\nexport default x;\n',
    },
    "defined in both a.js and entry.js": {
        "entry.js": 'import { a } from "./a.js";\nfunction helper() {}\nexport default a;\n',
        "a.js": "function helper() {}\nexport const a = 1;\n",
    },
    "renamed import": {
        "entry.js": 'import { a as b } from "./a.js";\nexport default b;\n',
        "a.js": "export const a = 1;\n",
    },
    "only `import { names } from`": {
        "entry.js": 'import a from "./a.js";\nexport default a;\n',
        "a.js": "export const a = 1;\n",
    },
    "not exported by a.js": {
        "entry.js": 'import { b } from "./a.js";\nexport default b;\n',
        "a.js": "export const a = 1;\nconst b = 2;\n",
    },
    "only the entry may have an `export default`": {
        "entry.js": 'import { a } from "./a.js";\nexport default a;\n',
        "a.js": "export const a = 1;\nexport default a;\n",
    },
    "exactly one `export default`": {"entry.js": "export const a = 1;\n"},
    "no module": {"entry.js": 'import { a } from "./gone.js";\nexport default a;\n'},
}


@pytest.mark.parametrize("message", list(BROKEN))
def test_what_a_plain_join_would_get_wrong_is_refused(tmp_path, message):
    root = _tree(tmp_path, BROKEN[message])
    with pytest.raises(bundle.BundleError, match=re.escape(message)):
        bundle.assemble(root / "entry.js")


def test_importing_the_package_does_not_import_streamlit():
    code = "import sys, explorer, explorer.bundle; print('streamlit' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr
