"""Embedding shift: how context moves each token's vector, layer by layer, in one PCA plane."""

from ui import glossary, router
from ui.text import embedding_shift, verify
from viz.embedding_shift import layer_name

shared = router.shared()
trace = router.require_trace(shared)
glossary.heading(f"Embedding shift · {layer_name(shared.layer + 1)}", level="title")
embedding_shift.intro(shared, trace)
shift = embedding_shift.follow(shared, trace)
embedding_shift.plane(shift)
if shift.probes:
    glossary.heading(
        f"Which probes is {shift.who} nearer, relative to the others, before and after context?",
        level="subheader",
    )
    embedding_shift.nearer(shift)
glossary.heading(f"The path of {shift.who} through the layers", level="subheader")
embedding_shift.path(shift)
embedding_shift.engineers(shift)
verify.button(shared, trace)  # run the sentence through the reference library
