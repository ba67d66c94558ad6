"""Listen's "Verify against the reference library" button (ui/listen/verify.py,
references/whisper.py): on a shipped clip CTranslate2 writes our tokens and its encoder agrees
within 1e-3 of its largest value, transformers' attentions (cross, decoder self, encoder self)
within 1e-4, as in tests/core/test_whisper_exact.py; each number on the page is the difference
this test measures itself against the references. Without ctranslate2 the button says how to
install it (the import made to fail, no numbers mocked); torch is imported only when it is
pressed."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ctranslate2")
pytest.importorskip("transformers")

from attention_core import log_mel, transcribe
from attention_core.core.pieces import show_piece
from attention_core.models.whisper.audio import load_audio
from attention_core.models.whisper.forward import encoder_pattern
from references.text import INSTALL, round_up
from references.whisper import TOL_ATTENTION, TOL_ENCODER, check_clip, token_problem
from tests.app.conftest import open_page
from tests.core import whisper_refs as refs
from ui.verify import BUTTON

pytestmark = pytest.mark.usefixtures("room_for_verify")  # tests/app/conftest.py

ROOT = Path(__file__).resolve().parents[2]
CLIP = "river"  # a shipped example clip (examples/clips/)


@dataclass(frozen=True)
class Clip:
    """The engine's trace of a clip, as the check reads it (ui.listen.cache.Heard's fields)."""

    token_ids: tuple[int, ...]
    n_prompt: int
    mel_ft: np.ndarray
    cross_pattern_lhqk: np.ndarray
    self_pattern_lhqk: np.ndarray
    encoder_hidden_ltd: np.ndarray


@pytest.fixture(scope="module")
def clip() -> Clip:
    """The clip as the page computes it: the engine's log-mel and transcript."""
    trace = transcribe(refs.engine(), log_mel(load_audio(refs.CLIPS / f"{CLIP}.wav").samples_n))
    return Clip(
        trace.token_ids,
        len(trace.prompt_ids),
        trace.mel_ft,
        trace.cross_pattern_lhqk,
        trace.self_pattern_lhqk,
        trace.encoder_hidden_ltd,
    )


@pytest.fixture(scope="module")
def measured(clip: Clip) -> dict[str, float]:
    """Our numbers against the references, measured here (the largest differences)."""
    want_td = refs.ct2_encode(clip.mel_ft)
    out = refs.hf_attentions(clip.mel_ft, clip.token_ids)
    enc = [
        np.abs(encoder_pattern(refs.engine(), clip.encoder_hidden_ltd, layer) - a[0].numpy()).max()
        for layer, a in enumerate(out.encoder_attentions)
    ]
    cross = np.stack([a[0].numpy() for a in out.cross_attentions])
    self_ = np.stack([a[0].numpy() for a in out.decoder_attentions])
    encoder = np.abs(clip.encoder_hidden_ltd[-1].astype(np.float64) - want_td)
    return {
        "tokens_equal": float(
            list(clip.token_ids[clip.n_prompt :]) == refs.ct2_tokens(clip.mel_ft)
        ),
        "encoder": float(encoder.max()),
        "encoder_relative": float(encoder.max() / np.abs(want_td).max()),
        "cross": float(np.abs(clip.cross_pattern_lhqk - cross).max()),
        "self": float(np.abs(clip.self_pattern_lhqk - self_).max()),
        "encoder_self": float(max(enc)),
    }


def test_the_check_of_a_shipped_clip_is_within_the_engine_tests_tolerances(clip, measured):
    tokens = [show_piece(t) for t in refs.engine().token_strings(clip.token_ids)]
    problem, found = check_clip(refs.engine(), clip, tokens)
    assert problem == "" and measured["tokens_equal"] == 1.0
    encoder, cross, self_, encoder_self = found
    assert encoder.tolerance == TOL_ENCODER == 1e-3
    assert encoder.relative == pytest.approx(measured["encoder_relative"], rel=1e-6)
    assert encoder.relative <= 1e-3 and encoder.agrees
    for diff, name in [(cross, "cross"), (self_, "self"), (encoder_self, "encoder_self")]:
        assert diff.tolerance == TOL_ATTENTION == 1e-4
        assert diff.largest == pytest.approx(measured[name], rel=1e-6)
        assert diff.largest <= 1e-4 and diff.agrees


def test_a_different_transcript_is_said_plainly():
    assert token_problem([1, 2, 3], [1, 2, 3], ["a", "b", "c"]) == ""
    assert token_problem([1, 2, 3], [1, 2], ["a", "b", "c"]) == (
        "it writes 2 tokens where ours writes 3"
    )
    assert (
        token_problem([1, 2, 3], [1, 5, 3], ["a", "b", "c"])
        == "its token 1 differs from ours (“b”)"
    )


def _without(monkeypatch, name: str) -> None:
    """Make ``name`` look uninstalled to the check (as on a venv without the verify extra)."""
    real = importlib.util.find_spec

    def find_spec(fullname, *args, **kwargs):
        return None if fullname == name else real(fullname, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def _listen():
    at = open_page("listen")
    assert not at.exception, at.exception
    at.selectbox(key="lis_clip").set_value(CLIP)
    at = at.run()
    assert not at.exception, at.exception
    return at


def _press(at, timeout: float = 300):
    (button,) = [b for b in at.button if b.key == "verify_run"]
    assert button.label == BUTTON
    at = button.click().run(timeout=timeout)  # the libraries load on the first press
    assert not at.exception, at.exception
    return at


def test_listen_shows_the_button_and_the_verdict(clip, measured):
    at = _listen()
    assert not [d for d in at.dataframe if "compared" in d.value.columns]  # not before a press
    at = _press(at)
    (table,) = [d.value for d in at.dataframe if "compared" in d.value.columns]
    assert list(table["compared"]) == [
        "encoder output (CTranslate2)",
        "cross-attention, every head (transformers)",
        "decoder self-attention, every head (transformers)",
        "encoder self-attention, every head (transformers)",
    ]
    largest = [measured[k] for k in ("encoder", "cross", "self", "encoder_self")]
    for shown, want in zip(table["largest difference"], largest, strict=True):
        assert float(shown) == pytest.approx(want, rel=0.05)
    assert table["verdict"][0] == (
        f"agree to within {round_up(measured['encoder_relative'])} times its largest number"
    )
    attention = round_up(max(largest[1:]))
    n_text = len(clip.token_ids) - clip.n_prompt
    learner = [m.value for m in at.markdown if m.value.startswith("CTranslate2 writes")]
    assert learner == [
        f"CTranslate2 writes the same {n_text} tokens as ours. Our numbers and those of "
        "CTranslate2 and transformers agree on this clip: the encoder's output to within "
        f"{round_up(measured['encoder_relative'])} times its largest number, every attention "
        f"weight to within {attention}. That is rounding in the last digits a computer keeps. "
        "All of them read the same input: the log-mel spectrogram our engine made of the sound "
        "(its loudness in 80 pitch bands, every 10 ms), so this check covers everything after "
        "that step, not the step itself."
    ]
    (engineers,) = [
        e
        for e in at.expander
        if e.label == "For engineers" and any("references.whisper" in m.value for m in e.markdown)
    ]
    assert "`output_attentions=True`" in engineers.markdown[0].value
    assert not engineers.proto.expanded
    at.selectbox(key="lis_clip").set_value("fluffy")  # another clip: its own press
    at = at.run(timeout=300)
    assert not [m for m in at.markdown if m.value.startswith("CTranslate2 writes")]


def test_without_the_extra_the_listen_button_says_how_to_install_it(monkeypatch):
    _without(monkeypatch, "ctranslate2")
    at = _press(_listen())
    (warning,) = [w.value for w in at.warning if "This check needs" in w.value]
    assert "This check needs ctranslate2, which is not installed here" in warning
    assert (
        [c.value for c in at.code]
        == [INSTALL["whisper"]]
        == ['.venv/bin/pip install -e ".[verify]"']
    )
    assert not [d for d in at.dataframe if "compared" in d.value.columns]


def test_listen_imports_the_libraries_only_when_pressed():
    code = (  # this module imports ctranslate2 (importorskip): a fresh process, the page alone
        "import sys\n"
        "from tests.app.conftest import open_page\n"
        "names = {'torch', 'transformers', 'ctranslate2'}\n"
        f"at = open_page('listen'); at.selectbox(key='lis_clip').set_value('{CLIP}'); at.run()\n"
        "print(sorted(names & set(sys.modules)))\n"
        "[b for b in at.button if b.key == 'verify_run'][0].click().run(timeout=300)\n"
        "print(sorted(names & set(sys.modules)))\n"
    )
    room = {**os.environ, "ATTENTION_MEMORY_BUDGET_MB": "4096"}  # as room_for_the_check
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, env=room
    )
    assert done.stdout.strip().splitlines()[-2:] == [
        "[]",
        "['ctranslate2', 'torch', 'transformers']",
    ]
