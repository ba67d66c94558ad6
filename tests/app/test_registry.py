"""One registry of pages: the navigation and Start here's map both come from it."""

from tests.app.conftest import open_page
from ui import registry
from ui.tour import N_STEPS


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
        at = open_page(page.name, s="The river bank was muddy")
        assert not at.exception, page.name
