"""Long text: SmolLM2 over a whole page, where every head puts its weight (the first token's
share, how far back it reads), how that changes along the text, and what the length costs."""

from ui import glossary, router
from ui.text import long_text
from ui.tour import cost

shared = router.shared()  # the sidebar shows SmolLM2 here (ui.registry: the page's models)
glossary.heading("Long text", level="title")
trace, text = long_text.require_trace(shared)
glossary.note(long_text.lead(trace))
reach = long_text.reach_of(long_text.MODEL, text)
glossary.heading("1 · How much weight lands on the first token", level="subheader")
long_text.first_token(trace, reach)
long_text.top_keys_table(trace, reach)
glossary.heading("2 · How far back each head reads", level="subheader")
long_text.how_far(reach)
glossary.heading("3 · Along the text", level="subheader")
long_text.along(trace, reach, shared.layer, shared.head)
long_text.engineers_note(trace, reach)
glossary.heading("4 · What a longer text costs", level="subheader")
glossary.say(long_text.COST_LEAD)
cost.long_text_cost(long_text.MODEL, long_text.shipped_text(), long_text.LongText.timed.key)
