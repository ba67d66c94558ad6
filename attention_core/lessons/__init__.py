"""The arithmetic the pages and the guided tour show: the tour's own numbers, worked examples,
the notes' examples measured, the build-a-head block, √d_k saturation, the All heads page's order,
what a longer context costs, and embeddings that need no model."""
