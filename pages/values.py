"""Value updates ΔE: how one token's vector is nudged by a weighted sum of the others' values."""

from ui import glossary, router
from ui.text import values

shared = router.shared()
trace = router.require_trace(shared)
layer, head = shared.layer, shared.head
glossary.heading(f"Value updates ΔE · layer {layer}, head {head}", level="title")
glossary.note(values.LEAD)
followed = values.follow(shared, trace)
who = values.who(trace, followed)
glossary.heading(f"1 · How much {who} takes from each token", level="subheader")
values.weights(trace, followed)
glossary.heading("2 · The weighted sum of value vectors", level="subheader")
values.weighted_sum(trace, followed)
glossary.heading(f"3 · From z to the new vector of {who}", level="subheader")
values.new_vector(trace, followed)
glossary.heading(f"4 · Every head's proposal for {who}", level="subheader")
values.proposals(trace, followed)
glossary.heading(f"5 · How much layer {layer} changes every token", level="subheader")
values.every_token(trace, followed)
values.engineers(followed)
