"""What did that word do? One word of the sidebar's sentence hidden from every token, and how a
watched token's vector, its probe cosines and the sentence embedding change, layer by layer."""

from ui import glossary, router, safe
from ui.text import hide_choice, hide_word

shared = router.shared()
trace = router.require_trace(shared)
glossary.heading("What did that word do?", level="title")
glossary.note(hide_word.LEAD)
hidden = hide_choice.choose(shared, trace)
watched = hide_choice.who(trace, hidden)
hide_word.summary(trace, hidden)
glossary.heading(f"How far {watched} moved, layer by layer", level="subheader")
hide_word.moved(trace, hidden)
glossary.heading(
    f"What {safe.token(hidden.word)} adds to the meaning of {watched}",
    level="subheader",
)
hide_word.meaning(trace, hidden, shared.layer + 1)
hide_word.sentence(trace, hidden)
hide_word.engineers(hidden)
