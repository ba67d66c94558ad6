"""Text that is not valid Unicode, at every way in: the engine's check, the command line, the
notebook widget, a link's sentence. A lone surrogate (a JSON body's "\\ud800", a command line's
undecodable bytes) once reached the tokenizers, which raise TypeError, not a message."""

from __future__ import annotations

import subprocess
import sys
from urllib.parse import parse_qs

import pytest

from attention_core import tokenize
from attention_core.core.tokens import MAX_CHARS, NOT_UNICODE, check_text, valid_unicode
from explorer.notebook import check_source
from ui.params import PARAMS

LONE = ["x\ud800", "\udfff", "river \ud83d bank", "\udced\udca0\udc80"]


@pytest.mark.parametrize("text", LONE)
def test_check_text_refuses_lone_surrogates_with_a_plain_message(text):
    assert not valid_unicode(text)
    with pytest.raises(ValueError, match="not valid Unicode"):
        check_text(text)


def test_check_text_keeps_what_is_valid_and_refuses_the_rest():
    for good in ("river bank", "😀 河岸", "\u202etext", "a" * MAX_CHARS):
        assert check_text(good) == good
    for bad, why in ((None, "string"), (b"x", "string"), (" \t", "empty"), ("a" * 20_001, "limit")):
        with pytest.raises(ValueError, match=why):
            check_text(bad)


@pytest.mark.parametrize("key", ["minilm", "smollm2"])
def test_tokenize_refuses_a_surrogate_with_value_error(engines, key):
    with pytest.raises(ValueError, match="not valid Unicode"):
        tokenize(engines[key], "x\ud800")


def test_the_notebook_widget_refuses_a_surrogate():
    with pytest.raises(ValueError, match="not valid Unicode"):
        check_source("minilm", "bank\udc80")


def test_a_links_sentence_that_is_not_unicode_is_refused():
    with pytest.raises(ValueError, match="not valid Unicode"):
        PARAMS["s"].parse("river\ud800")
    # What a browser sends for those bytes never reaches a page as a surrogate: Streamlit reads
    # the query string with parse_qs, which decodes invalid UTF-8 as U+FFFD.
    assert parse_qs("s=river%ED%A0%80bank")["s"] == ["river\ufffd\ufffd\ufffdbank"]


def test_the_command_line_refuses_undecodable_bytes_before_loading_a_model(tmp_path):
    out = tmp_path / "x.npz"
    argv = [sys.executable, "-m", "attention_core", "trace", b"river \xed\xa0\x80 bank", "--out"]
    done = subprocess.run([*argv, str(out)], capture_output=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert NOT_UNICODE.encode() in done.stderr
    assert b"Traceback" not in done.stderr and not out.exists()
