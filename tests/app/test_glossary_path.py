"""The glossary on the learner path (issue 35): on every page and every tour step, the first text
that names a glossary term carries the term's sentence in its hover (or says the sentence itself).

Each page is walked as a learner reads it: the main area's text in order (Markdown, captions,
titles and headers, info boxes with the caption under them, metrics' labels), the closed "For
engineers" expanders left out; the sidebar, widget labels, tables' columns and charts' own titles
are not read.
"""

from __future__ import annotations

import pytest

from attention_core.lessons.glossary import TERMS, terms_in
from tests.app.conftest import open_page
from ui import registry, tour
from ui.glossary import BOX_NOTE

TEXTS = {"Markdown", "Caption", "Title", "Header", "Subheader", "Info", "Warning", "Success"}
BOXES = {"Info", "Warning", "Success"}
NOT_WALKED = {"glossary"}  # the glossary page itself: every term, each with its sentence
PAGES = [p.name for p in registry.PAGES if p.name not in NOT_WALKED | {"learn"}]


def _elements(node):
    """The elements under ``node`` in reading order, the "For engineers" expanders left out."""
    name = type(node).__name__
    if name == "Expander" and "For engineers" in node.label:
        return
    children = getattr(node, "children", None)
    if children is None or name in TEXTS or name == "Metric":
        yield node
        return
    for child in children.values():
        yield from _elements(child)


def _read(elements):
    """(text, hover) of each element a learner reads, in order."""
    out = []
    for k, el in enumerate(elements):
        name = type(el).__name__
        if name == "Metric":
            out.append((el.label, el.proto.help))
        elif name in BOXES:
            after = elements[k + 1] if k + 1 < len(elements) else None
            near = (
                after is not None and type(after).__name__ == "Caption" and after.value == BOX_NOTE
            )
            out.append((el.value, after.proto.help if near else ""))
        elif name in TEXTS:
            out.append((el.value, el.proto.help))
    return out


def unexplained(at) -> list[str]:
    """Each term whose first mention on the page carries neither its sentence nor a hover
    with it: the term and the text."""
    seen, missing = set(), []
    for text, hover in _read(list(_elements(at.main))):
        for term in terms_in(text):
            if term.name in seen:
                continue
            seen.add(term.name)
            if term.sentence not in hover and term.sentence not in text:
                missing.append(f"{term.name}: {text[:90]!r}")
    return missing


def _check(at):
    assert not at.exception, [e.value for e in at.exception]
    assert unexplained(at) == []


@pytest.mark.parametrize("page", PAGES)
def test_each_page_explains_each_term_where_it_first_appears(page):
    # the default sentence opens Long text on its shipped page (~1,900 tokens, ~40 s here);
    # a text of its own keeps the walk short (test_page_long_text.py reads the long one)
    own = {"s": "The ferry left the north bank at noon, and the keeper counted twice."}
    _check(open_page(None if page == "home" else page, **(own if page == "long_text" else {})))


@pytest.mark.parametrize(
    "page",
    [
        "home",
        "pattern",
        "all_heads",
        "values",
        "beyond",
        "embedding_shift",
        "build_head",
        "hide_word",
        "compare",
        "notes",
    ],
)
def test_on_smollm2_too(page):
    _check(open_page(None if page == "home" else page, model="smollm2"))


@pytest.mark.parametrize("step", range(1, tour.N_STEPS + 1))
def test_each_tour_step_explains_each_term_where_it_first_appears(step):
    _check(open_page("learn", step=str(step)))


def test_the_glossary_page_lists_every_term_with_its_sentence():
    at = open_page("glossary")
    assert not at.exception, [e.value for e in at.exception]
    said = [m.value for m in at.markdown]
    assert said == [f"**{t.name}**: {t.sentence}" for t in TERMS]


def test_text_written_again_from_the_same_place_keeps_its_hover():
    """A loop, or a st.fragment rerun (which skips ``router.shared()`` and so keeps the full
    run's memory), writes text again from the place that explained a term: it hovers again;
    any other place does not. (AppTest reruns the whole script on a component's report, so
    the fragment case is checked here on ``help_for`` itself.)"""
    from attention_core.lessons.glossary import term
    from ui.glossary import help_for, start_run

    head = term("head").sentence
    start_run()
    assert head in (help_for("one head", site="fragment.py:3") or "")
    assert help_for("another head", site="page.py:9") is None
    assert head in (help_for("one head again", site="fragment.py:3") or "")
    assert help_for("a layer", site="page.py:9", extra="mine") == (
        f"mine\n\n**layer**: {term('layer').sentence}"
    )
    start_run()
    assert head in (help_for("the head", site="page.py:9") or "")
