"""No page names a role its numbers do not reach (issue 34).

Each page that can say what a head is runs here (AppTest, on presets and a typed sentence, on
both text models where the page offers them). Every markdown, caption and message a learner
reads is scanned for a head's name ("Layer L, head H") and what the text after it says the head
is ("previous-token head", "first-token sink", "broad", "mixed", …); each such claim is checked
against the roles transformers' attentions give the head, scored by TransformerLens's head
detector under the stated rule (``tests.role_claims``, ``tests.roles_reference``), on the
text that head was run on. And the source: no hand-written gloss of a head is left in ui/ or
attention_core/lessons/.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from attention_core.lessons.notes import FLUFFY, JANE, MONSTER_CONTEXT
from attention_core.methods.decoder_heads import NOTE_PHRASE
from tests.app.conftest import open_page
from tests.role_claims import check, claims, names_a_role, plain
from ui import tour
from ui.presets import CURATED, MONEY_BANK, RIVER_BANK

ROOT = Path(__file__).resolve().parents[2]
TYPED = "the dog saw the dog and the cat saw the cat"  # repeats: copies and followers
READ = {"markdown", "caption", "info", "warning", "success", "text"}
GLOSSES = (  # how heads were described by hand before every sentence was built from numbers
    "refers back",
    "refers to",
    "says which kind",
    "the word that",
    "what jane does",
    "the words that describe",
    "that describe it",
    "makes it the bank",
    "the word it",
    "looks at the word before",
    "favours nearby",
    "nothing better to do",
    "when they have nothing to do",
    "different habits: some look",
)


def texts(node, section: str = "") -> list[tuple[str, str]]:
    """(the subheader above it, its text) for every element a learner reads, in page order;
    the closed "For engineers" expanders left out."""
    kind = getattr(node, "type", "")
    if kind == "expander":
        return []
    if kind in READ and isinstance(getattr(node, "value", None), str):
        return [(section, node.value)]
    out = []
    for child in getattr(node, "children", {}).values():
        if getattr(child, "type", "") == "subheader":
            section = child.value
        out.extend(texts(child, section))
    return out


def problems(at, model: str, text_of) -> tuple[list[str], int]:
    """What the page says wrongly about heads, and how many role claims it makes. ``text_of``
    maps a subheader to the (model, text) the heads under it were run on; a text that names
    SmolLM2 (the tour's decoder steps, beside MiniLM's sidebar) speaks of SmolLM2's heads."""
    assert not at.exception, [e.value for e in at.exception]
    wrong, seen = [], 0
    for section, element in [*texts(at.main), *texts(at.sidebar)]:
        for layer, head, segment in claims(element):
            if not names_a_role(segment):
                continue
            seen += 1
            key, text = text_of(section, model)
            if "SmolLM2" in element or "SmolLM2" in section:
                key = "smollm2"
            wrong += check(key, text, layer, head, segment)
    return wrong, seen


def one_text(sentence: str):
    return lambda _section, model: (model, sentence)


@pytest.mark.parametrize("preset", CURATED, ids=[p.sentence[:20] for p in CURATED])
def test_start_here_on_every_preset(preset):
    at = open_page(None, s=preset.sentence)
    wrong, seen = problems(at, "minilm", one_text(preset.sentence))
    assert not wrong and seen >= 1, wrong


@pytest.mark.parametrize("model", ["minilm", "smollm2"])
@pytest.mark.parametrize("sentence", [TYPED, RIVER_BANK])
def test_start_here_on_a_typed_sentence_and_the_default(model, sentence):
    at = open_page(None, s=sentence, model=model)
    wrong, seen = problems(at, model, one_text(sentence))
    assert not wrong and seen >= 1, wrong


@pytest.mark.parametrize(("layer", "head"), [("0", "2"), ("3", "4"), ("5", "11")])
def test_start_here_on_the_sidebars_head(layer, head):
    """A link's head is the sidebar's: its sentence is said from its numbers too."""
    at = open_page(None, s=MONEY_BANK, layer=layer, head=head)
    wrong, seen = problems(at, "minilm", one_text(MONEY_BANK))
    assert not wrong and seen >= 1, wrong
    assert any(f"Layer {layer}, head {head} (the sidebar's)" in plain(m.value) for m in at.markdown)


def notes_text(section: str, model: str) -> tuple[str, str]:
    """The example a section of the notes' page runs (the plumbing table always on SmolLM2)."""
    number = section.split(" ", 1)[0]
    if number == "1":
        return "smollm2", NOTE_PHRASE
    return model, {"2": FLUFFY, "3": JANE, "4": JANE}.get(number, MONSTER_CONTEXT)


@pytest.mark.parametrize("model", ["minilm", "smollm2"])
def test_the_notes_examples(model):
    at = open_page("notes", model=model)
    wrong, seen = problems(at, model, notes_text)
    assert not wrong and seen >= 3, wrong  # fluffy's two heads and Jane's


@pytest.mark.parametrize("model", ["minilm", "smollm2"])
@pytest.mark.parametrize("sentence", [TYPED, RIVER_BANK])
def test_beyond_the_weights(model, sentence):
    at = open_page("beyond", s=sentence, model=model)
    wrong, _ = problems(at, model, one_text(sentence))
    assert not wrong, wrong


@pytest.mark.parametrize(
    ("step", "sentence"),
    [(step, TYPED) for step in tour.ORDER]
    + [(step, RIVER_BANK) for step in ("heads", "jobs", "weight_effect") if step in tour.ORDER],
)
def test_the_tour(step, sentence):
    number = str(tour.ORDER.index(step) + 1)
    at = open_page("learn", s=sentence, step=number, layer="1", head="9")
    wrong, _ = problems(at, "minilm", one_text(sentence))
    assert not wrong, wrong


@pytest.mark.parametrize("page", ["pattern", "all_heads", "values"])
def test_the_other_head_pages(page):
    at = open_page(page, s=TYPED)
    wrong, _ = problems(at, "minilm", one_text(TYPED))
    assert not wrong, wrong


def test_a_wrong_claim_is_caught():
    """The check itself: layer 1, head 9 on the river bank is a first-token sink by the
    reference (its previous-token share, 0.38, is short of the rule's 0.12 + 0.30); calling it a
    previous-token head, an induction head, broad or mixed fails."""
    good = "Layer 1, head 9 is, by the rule, a first-token sink."
    [(layer, head, segment)] = claims(good)
    assert check("minilm", RIVER_BANK, layer, head, segment) == []
    for bad in (
        "a previous-token head",
        "an induction head",
        "a broad head",
        "mixed, with no single job",
    ):
        [(layer, head, segment)] = claims(f"Layer 1, head 9 is, by the rule, {bad}.")
        assert check("minilm", RIVER_BANK, layer, head, segment), bad
    [(layer, head, segment)] = claims(
        "Layer 1, head 9: a first-token sink, 20% of its weight "
        "on the first token, “[CLS]” (an even spread: 14%)."
    )
    assert check("minilm", RIVER_BANK, layer, head, segment)  # the share is not the reference's


def _source_files() -> list[Path]:
    return sorted([*(ROOT / "ui").rglob("*.py"), *(ROOT / "attention_core/lessons").rglob("*.py")])


def test_no_hand_written_gloss_of_a_head_is_left():
    found = []
    for path in _source_files():
        joined = re.sub(r'"\s*\n\s*[rf]*"', "", path.read_text())  # "…" "…" across lines
        lower = re.sub(r"\s+", " ", joined).lower()
        found += [(str(path.relative_to(ROOT)), g) for g in GLOSSES if g in lower]
    assert not found, found
