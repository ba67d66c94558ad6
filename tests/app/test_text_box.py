"""The sidebar's text: a box that takes a page (a text area, and its limits read from the
models' configs), a .txt upload checked before its text is used (good, binary, not UTF-8, too
big, empty), and a long text kept across pages and out of the link with a note."""

from __future__ import annotations

import pytest

from attention_core import load_config
from attention_core.core.tokens import MAX_CHARS
from tests.app.conftest import open_page, url_param
from ui.text.upload import MAX_FILE_BYTES, read_text_file

PAGE = (
    "The river bank was muddy after the rain.\n\n"
    "Jane visits Africa in September; she sends <b>postcards</b> & notes home.\n"
)


def _upload(at, name: str, data: bytes):
    """Upload as a visitor does: the uploader is there once "A page of text" is on."""
    assert not at.sidebar.get("file_uploader")  # a sentence's page loads no uploader
    at.sidebar.toggle(key="s_page").set_value(True).run()
    at.sidebar.file_uploader(key="s_file").set_value((name, data, "text/plain"))
    return at.run()


def _said(at) -> str:
    """The sidebar's notes and errors as read (Markdown's escapes taken out)."""
    return " ".join(e.value for e in [*at.sidebar.error, *at.sidebar.caption]).replace("\\", "")


def test_the_box_names_each_models_limit_from_its_config():
    at = open_page("values", s="the river bank")
    assert not at.exception
    help_text = at.sidebar.text_input(key="s").help
    for name in ("minilm", "smollm2"):
        cfg = load_config(name)
        assert f"{cfg.name} reads up to {cfg.max_tokens:,} tokens" in help_text or (
            f"{cfg.name} {cfg.max_tokens:,}" in help_text
        )
    assert f"{MAX_CHARS:,} characters" in help_text


def test_a_page_of_text_goes_in_a_text_area_and_keeps_its_lines_across_pages():
    at = open_page("values", s="the river bank")
    at.sidebar.toggle(key="s_page").set_value(True).run()
    assert not at.exception
    assert at.sidebar.text_area(key="s").value == "the river bank"  # the text moved boxes
    at.sidebar.text_area(key="s").input(PAGE)
    next(b for b in at.sidebar.button if b.label == "Run").click().run()
    assert not at.exception and at.session_state["s"] == PAGE
    at.switch_page("pages/pattern.py").run()
    assert not at.exception
    assert at.sidebar.text_area(key="s").value == PAGE  # several lines: still the big box
    assert at.sidebar.toggle(key="s_page").value and at.sidebar.toggle(key="s_page").disabled
    assert url_param(at, "s") == PAGE  # line ends survive the link


def test_a_text_of_twenty_thousand_characters_stays_out_of_the_link_with_a_note():
    text = ("The river bank was muddy after the rain. " * 600)[:MAX_CHARS]
    at = open_page("values", s="the river bank")
    at.sidebar.toggle(key="s_page").set_value(True).run()
    at.sidebar.text_area(key="s").input(text)
    next(b for b in at.sidebar.button if b.label == "Run").click().run()
    assert not at.exception
    assert url_param(at, "s") is None
    assert "too long to keep in the page's link" in _said(at)
    at.switch_page("pages/all_heads.py").run()  # the session keeps it
    assert not at.exception and at.session_state["s"] == text


def test_a_good_file_becomes_the_text():
    at = open_page("values", s="the river bank")
    at = _upload(at, "notes.txt", b"\xef\xbb\xbf" + PAGE.replace("\n", "\r\n").encode())
    assert not at.exception
    assert at.session_state["s"] == PAGE  # BOM dropped, Windows line ends made plain
    assert at.sidebar.text_area(key="s").value == PAGE
    assert f"notes.txt: {len(PAGE):,} characters" in _said(at)
    assert not at.sidebar.error
    # Nothing in the file is read as Markdown or HTML: the tags are text in the page's view.
    assert all("<b>" not in m.value for m in at.markdown if m.proto.allow_html)


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("photo.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "binary"),
        ("latin.txt", "Café au lait, s'il vous plaît.".encode("latin-1"), "not UTF-8"),
        ("wide.txt", "the river bank".encode("utf-16"), "UTF-16"),
        ("empty.txt", b"", "empty"),
        ("blank.txt", b" \n\n\t \n", "no text"),
        ("big.txt", b"a" * (MAX_FILE_BYTES + 1), f"{MAX_FILE_BYTES / 1000:,.0f} kB"),
        ("long.txt", b"a " * (MAX_CHARS // 2 + 1), f"at most {MAX_CHARS:,}"),
    ],
)
def test_a_file_that_is_not_readable_text_is_refused_and_the_text_kept(name, data, reason):
    at = open_page("values", s="the river bank")
    at = _upload(at, name, data)
    assert not at.exception
    assert at.session_state["s"] == "the river bank"
    assert len(at.sidebar.error) == 1
    assert f"{name} was not used" in _said(at) and reason in _said(at)


def test_the_size_is_checked_before_a_byte_is_read():
    def read() -> bytes:
        raise AssertionError("read before the size was checked")

    with pytest.raises(ValueError, match="kB"):
        read_text_file(MAX_FILE_BYTES + 1, read)
    with pytest.raises(ValueError, match="empty"):
        read_text_file(0, read)
