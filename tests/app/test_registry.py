"""One registry of pages: the navigation and Start here's map both come from it."""

from tests.app.conftest import open_page
from ui import registry
from ui.tour import N_STEPS

LONG_TEXT_OWN = "The ferry left the north bank at noon, and the keeper counted the crates twice."


def test_start_here_links_every_other_page_once_with_its_blurb():
    at = open_page(None)
    assert not at.exception
    links = [el.proto.page for el in at.get("page_link")]
    assert links == [p.name for p in registry.PAGES[1:]]  # each link names its page
    captions = [c.value for c in at.caption]
    for page in registry.PAGES[1:]:
        assert page.blurb in captions
    assert f"{N_STEPS} short steps" in registry.PAGES[1].blurb


def test_every_registered_page_opens():
    names = [p.name for p in registry.PAGES]
    assert len(set(names)) == len(names) and names[0] == "home"
    for page in registry.PAGES[1:]:
        # an example sentence opens Long text on its shipped page (~1,900 tokens, ~40 s here):
        # tests/app/test_page_long_text.py reads that page on a text of its own
        sentence = "The river bank was muddy" if page.name != "long_text" else LONG_TEXT_OWN
        at = open_page(page.name, s=sentence)
        assert not at.exception, page.name


def test_a_decoders_token_is_said_to_see_itself_too():
    """A causal mask lets a token see itself and the tokens before it (issue 35): no text in
    the app says it sees "only the ones before it"."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    texts = [p.read_text() for p in (root / "ui").rglob("*.py")]
    assert not [t for t in texts if "sees only the ones before" in t]
    assert any("sees only itself and the ones before it" in t for t in texts)
