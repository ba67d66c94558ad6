"""Inside a decoder: SmolLM2's own causal mask, the notes' word table on a real head, rotary
positions beside MiniLM's learned ones, grouped key/value heads, next-token guesses."""

from ui import glossary, router
from ui.text import decoder

shared = router.shared()  # the sidebar shows SmolLM2 here (ui.registry: the page's models)
glossary.heading("Inside a decoder", level="title")
cfg = decoder.require_models()
glossary.note(decoder.lead(cfg))
trace = decoder.require_trace(shared)
layer, head = shared.layer, shared.head
glossary.heading("1 · Each token sees only itself and the tokens before it", level="subheader")
decoder.masked(trace, layer, head)
glossary.heading(
    "2 · The notes' “Dirty Quantum Plumbing” head, on a real decoder", level="subheader"
)
decoder.note_table(decoder.MODEL)
glossary.heading("3 · Positions: rotated, not added", level="subheader")
decoder.positions(trace, layer, head)
glossary.heading("4 · Query heads that share a key and a value", level="subheader")
decoder.groups(trace, layer)
glossary.heading("5 · What it guesses next, at every position", level="subheader")
decoder.guesses(trace)
decoder.engineers(trace, layer, head)
