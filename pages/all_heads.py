"""All heads at once: what each head does (the role map), every layer's heads as small patterns,
their role scores, sorting."""

from ui import glossary, router
from ui.text import all_heads

shared = router.shared()
all_heads.open_picked_head()  # a head picked on the last run opens on the pattern page
trace = router.require_trace(shared)
glossary.heading("All heads", level="title")
all_heads.intro(trace)
glossary.heading("What each head does", level="subheader")
all_heads.role_map(shared, trace)
order = all_heads.controls(shared, trace)
all_heads.grid(shared, trace, order)
glossary.heading("The heads as numbers", level="subheader")
all_heads.table(trace, order)
