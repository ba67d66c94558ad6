"""Benchmarks: ``python -m bench core`` (the NumPy engine) and ``python -m bench app`` (the app)."""
