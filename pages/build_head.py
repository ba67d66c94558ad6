"""Build your own attention block: heads, d_k, weights and switches, with every head's pattern
and update live; and the measurement that shows why the scores are divided by √d_k."""

from ui import glossary, router
from ui.text import build_head

shared = router.shared()
glossary.heading("Build your own head", level="title")
glossary.note(build_head.LEAD)
use_model = build_head.use_model(shared)
block = build_head.settings(shared, use_model)
build_head.input_and_weights(shared, block)
glossary.heading("Each head's pattern", level="subheader")
build_head.patterns(block)
glossary.heading("Combining the heads", level="subheader")
build_head.combining(block)
glossary.heading("Why divide by √d_k?", level="subheader")
build_head.saturation(shared, block)
build_head.numbers(block)
