"""Compare two sentences: the same head's patterns side by side, and one shared word's
contextual vectors compared layer by layer."""

from ui import glossary, router
from ui.text import compare

shared = router.shared()
glossary.heading(f"Compare two sentences · layer {shared.layer}, head {shared.head}", level="title")
glossary.note(compare.LEAD)
compare.require_model(shared.model)
traces = compare.sentences(shared)
glossary.heading("One word, two contexts", level="subheader")
compare.one_word(shared, traces)
