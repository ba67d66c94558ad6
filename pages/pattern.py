"""One head's attention, step by step: Q·Kᵀ → ÷√d_k → mask → softmax, with the arithmetic.

The explorer (explorer/) draws the four stages and redraws every switch in the browser; this page
mounts it, keeps the session's settings in step when the browser reports a new view, and offers
the numbers as a table and files."""

from ui import glossary, router
from ui.text import pattern, verify

shared = router.shared()
trace = router.require_trace(shared)  # messages and a stop when there is nothing to show
glossary.heading("Attention pattern", level="title")
glossary.note(
    "Each token asks a question (its query) and every token offers an answer (its key). "
    "Their dot products are scaled"
    + (", masked (no token reads a later one)" if trace.config.causal else "")
    + " and turned by softmax into weights that sum to 1 for each query: how much that token "
    "draws from each of the others."
)
glossary.note(pattern.what_ifs(trace.config))
pattern.keep_cell_in(trace)
pattern.view_and_numbers(shared)

verify.button(shared, trace)  # run the sentence through the reference library
