"""A plain-text file as the text every page reads: the sidebar's uploader (``uploader``) and the
checks a file goes through before its text replaces the sidebar's (``read_text_file``): its size
first, before a byte is read, then UTF-8, then the text limits every way in shares."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.runtime.uploaded_file_manager import UploadedFile

from attention_core.core.tokens import MAX_CHARS, check_text
from ui import safe
from ui.state.shared import FRAME, Frame

# UTF-8 spends at most 4 bytes on a character, so a bigger file cannot hold MAX_CHARS or fewer.
MAX_FILE_BYTES = 4 * MAX_CHARS
UPLOAD_MB = 1  # the uploader's own refusal in the browser (whole MB): far above MAX_FILE_BYTES
# A text file holds tabs and line ends; more other control characters than this share of the
# characters means the bytes were not written as text (an image, a program, a zip).
CONTROL_SHARE = 0.01
_TEXT_CONTROLS = frozenset("\t\n\r\f")
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
SAVE_AS_UTF8 = "save it as UTF-8 (an editor's “Save as” offers the encoding) and upload it again"


def _kilobytes(size: int) -> str:
    return f"{size / 1000:,.0f} kB" if size >= 1000 else f"{size:,} bytes"


def _decode(data: bytes) -> str:
    """``data`` as UTF-8 text (a byte-order mark dropped); ValueError saying what it is instead."""
    if data.startswith(_UTF16_BOMS):
        raise ValueError(f"it is saved as UTF-16, not UTF-8: {SAVE_AS_UTF8}")
    if b"\x00" in data:  # no text encoding but UTF-16/32 writes a zero byte
        raise ValueError("it is not a text file (it holds binary data)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ValueError(
            f"it is not UTF-8 text (byte {err.start + 1:,} cannot be read; it may be in another "
            f"encoding such as Latin-1, or not text at all): {SAVE_AS_UTF8}"
        ) from None
    controls = sum(1 for c in text if ord(c) < 32 and c not in _TEXT_CONTROLS)
    if controls > CONTROL_SHARE * len(text):
        raise ValueError("it is not a text file (it holds binary data)")
    return text


def read_text_file(size: int, read: Callable[[], bytes]) -> str:
    """The text of a file of ``size`` bytes whose bytes ``read()`` returns, or ValueError with a
    plain reason: empty, over MAX_FILE_BYTES (checked before ``read`` is called), binary, not
    UTF-8, blank or over MAX_CHARS characters. Windows line ends become plain ones."""
    if size == 0:
        raise ValueError("the file is empty")
    if size > MAX_FILE_BYTES:
        raise ValueError(
            f"the file is {_kilobytes(size)}; a text file of at most {MAX_CHARS:,} characters "
            f"(the longest text the app reads) is at most {_kilobytes(MAX_FILE_BYTES)}"
        )
    text = _decode(read()).replace("\r\n", "\n")
    if len(text) > MAX_CHARS:
        raise ValueError(
            f"the file holds {len(text):,} characters; the app reads at most {MAX_CHARS:,}: "
            "cut it and upload it again"
        )
    if not text.strip():
        raise ValueError("the file holds no text (only spaces or blank lines)")
    return check_text(text)


def _use_upload() -> None:
    """The uploader's callback: a readable file's text becomes the sidebar's text; otherwise the
    text stays and the sidebar says why the file was not used."""
    upload = st.session_state.get(Frame.upload.key)
    if not isinstance(upload, UploadedFile):  # the visitor removed the file
        FRAME.upload_said = None
        return
    try:
        text = read_text_file(upload.size, upload.getvalue)
    except ValueError as err:
        FRAME.upload_said = ("error", f"{upload.name} was not used: {err}.", "")
        return
    FRAME.s = text
    FRAME.upload_said = ("ok", f"The text is {upload.name}: {len(text):,} characters.", text)


def uploader(where: DeltaGenerator) -> None:
    """The .txt uploader, and what became of the last file uploaded (file names and reasons are
    shown as the characters they are, never as Markdown or HTML)."""
    where.file_uploader(
        "Or upload a text file (.txt)",
        type=["txt"],  # the picker's filter; the bytes themselves are checked
        key=Frame.upload.key,
        max_upload_size=UPLOAD_MB,
        on_change=_use_upload,
        help=f"Plain text in UTF-8, up to {MAX_CHARS:,} characters: it replaces the text above.",
    )
    said = FRAME.upload_said
    if said is None:
        return
    kind, words, text = said
    if kind == "error":
        where.error(safe.md(words))
    elif text == FRAME.s:  # until the visitor types or picks another text
        where.caption(safe.md(words))
