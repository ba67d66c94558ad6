"""The text pages' rooms: the pages that run a text model (MiniLM or SmolLM2) on the sidebar's
sentence, one module (or sub-package) per page, their cached computations (``cache``)."""
