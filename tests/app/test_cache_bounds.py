"""Every cache the app keeps is bounded (issue 14): each st.cache_data / st.cache_resource /
functools cache in ui/, pages/, explorer/ and references/ has a bound and a stated worst case,
st.cache_data as a whole has a byte budget, and the trace store keeps to its budget under many
traces."""

from __future__ import annotations

import ast
import time
import tomllib
from pathlib import Path

import pytest

from attention_core import trace_sentence
from server.trace_store import TraceStore, nbytes
from ui import registry

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("ui", "pages", "explorer", "references")
STREAMLIT_CACHES = {"cache_data", "cache_resource"}
FUNCTOOLS_CACHES = {"cache", "lru_cache"}
# Caches allowed without max_entries, with the reason (none at the moment: functions without
# arguments are accepted by themselves, since they hold one entry).
EXCEPTIONS: dict[tuple[str, str], str] = {}


def _cached_functions():
    """(file, function, decorator name, decorator node, comment lines above it) for each."""
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            source = path.read_text()
            lines = source.splitlines()
            for node in ast.walk(ast.parse(source)):
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                for deco in node.decorator_list:
                    target = deco.func if isinstance(deco, ast.Call) else deco
                    name = getattr(target, "attr", None) or getattr(target, "id", None)
                    if name in STREAMLIT_CACHES | FUNCTOOLS_CACHES:
                        above, i = [], deco.lineno - 2
                        while i >= 0 and lines[i].lstrip().startswith("#"):
                            above.insert(0, lines[i].strip())
                            i -= 1
                        rel = str(path.relative_to(ROOT))
                        yield rel, node, name, deco, " ".join(above)


CACHED = list(_cached_functions())


def test_the_inventory_finds_the_apps_caches():
    names = {(f, node.name) for f, node, *_ in CACHED}
    assert ("ui/store.py", "trace_store") in names and ("ui/cache.py", "get_model") in names
    assert ("ui/text/cache.py", "block_view") in names
    assert len(CACHED) >= 15


@pytest.mark.parametrize(
    ("path", "node", "name", "deco", "comment"), CACHED, ids=[f"{c[0]}:{c[1].name}" for c in CACHED]
)
def test_every_cache_is_bounded_with_its_worst_case_stated(path, node, name, deco, comment):
    args = node.args
    no_arguments = not (args.args or args.posonlyargs or args.kwonlyargs or args.vararg)
    if (path, node.name) in EXCEPTIONS or no_arguments:
        return  # documented, or one entry at most
    keywords = {k.arg: k.value for k in deco.keywords} if isinstance(deco, ast.Call) else {}
    bound = "max_entries" if name in STREAMLIT_CACHES else "maxsize"
    assert bound in keywords, f"{path}:{node.name} needs {bound}="
    assert not (isinstance(keywords[bound], ast.Constant) and keywords[bound].value is None)
    assert "worst case" in comment.lower(), (
        f"{path}:{node.name}: state the worst case (entries × largest entry) in a comment above"
    )


def test_cache_data_as_a_whole_has_a_byte_budget():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    size = config["server"]["maxCacheDataSize"]
    assert size.lower().endswith("mb") and 0 < int(size[:-2]) <= 256


def test_the_trace_store_stays_within_its_budget_under_many_traces(model):
    budget = 80 * 2**20
    store = TraceStore(budget)
    lengths = [5, 300, 12, 64, 128, 8, 256, 40, 180, 20, 510, 30, 96, 6]
    sizes = {}
    for i, n in enumerate(lengths):
        text = " ".join([f"w{i}"] * n)
        key = (text,)
        trace = store.get(key, lambda text=text: trace_sentence(model, text))
        sizes[key] = nbytes(trace)
        assert store.nbytes == sum(size for _, size in store._lru.values())
        assert store.nbytes <= budget or len(store) == 1, (n, store.nbytes)
        assert key in store._lru  # the newest always stays
        assert store._computing == {} and store._latest == {}
    assert max(sizes.values()) > budget  # the 510-token trace alone is over it, and was kept
    assert len(store) >= 2  # short ones after it share the budget again


def test_freed_memory_is_trimmed_periodically(monkeypatch):
    import threading

    import server.memory

    calls, stop = [], threading.Event()
    monkeypatch.setattr(server.memory, "release_free_memory", lambda: calls.append(1))
    thread = threading.Thread(
        target=server.memory.trim_periodically, args=(stop, 0.01), daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 5
    while len(calls) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    stop.set()
    thread.join(5)
    assert len(calls) >= 3 and not thread.is_alive()


# A page script's namespace outlived its run when the session kept a function defined in it (a
# callback, a fragment, a format_func): every trace and array the page named stayed pinned outside
# the store's budget (the soak passed 1.3 GB after 20 sentences). Pages now hand Streamlit only
# functions defined in ui/ (their rooms), so their namespaces die with the run.
PAGES = tuple(page.name for page in registry.PAGES)


def _namespaces(script: str) -> list[dict]:
    """The live module namespaces of a page script (Streamlit runs each page in a fresh one)."""
    import gc

    gc.collect()
    return [
        d
        for d in gc.get_objects()
        if type(d) is dict and str(d.get("__file__", "")).endswith(script)
    ]


@pytest.mark.parametrize("page", PAGES)
def test_a_page_s_namespace_dies_with_its_run(page):
    import gc

    import ui.cache
    from attention_core import Trace
    from tests.app.conftest import open_page

    script = f"pages/{page}.py"
    before = _namespaces(script)  # other tests' sessions may still hold theirs: kept alive here,
    known = {id(d) for d in before}  # so that no new namespace can reuse their ids
    at = open_page(page, s=f"a sentence only the {page} page reads")
    assert not at.exception
    ui.cache.trace_store()._lru.clear()  # the store lets every trace go
    ui.cache.trace_store().nbytes = 0
    alive = [d for d in _namespaces(script) if id(d) not in known]
    assert not alive, f"{script}'s namespace outlives its run (a function defined in it is kept)"
    sentence = f"a sentence only the {page} page reads"
    gc.collect()
    pinned = [t for t in gc.get_objects() if type(t) is Trace and t.tokens.text.endswith(sentence)]
    assert not pinned, f"a trace of {script}'s sentence outlives the store"
