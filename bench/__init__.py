"""Benchmarks: ``./bench.sh NAME`` runs ``python -m bench NAME`` in the environment of run.sh
and test.sh (scripts/env.sh), e.g. ``./bench.sh core`` (the NumPy engine) or ``./bench.sh app``."""
