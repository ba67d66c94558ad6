"""The app: ``streamlit run app.py`` (what ./run.sh does) serves every page and the one HTTP route
the attention explorer fetches a sentence's numbers from (server/api.py).

Streamlit finds ``app`` below, an ASGI app, and serves it: the pages run navigation.py (the
navigation and the shared sidebar) for every view, and ``ROUTES`` answer the explorer's requests.
"""

import gc
import time

import pandas  # noqa: F401 - imported here so that gc.freeze() below covers them
import plotly.graph_objects  # noqa: F401
import streamlit as st
from starlette.middleware import Middleware

import viz.common  # noqa: F401
from server import faults, profile, streamlit_private
from server.guard import Guard
from server.health import HealthMiddleware
from server.static_cache import StaticCache
from ui import warm
from ui.cache import trace_store
from ui.routes import BODY_CAPS, ROUTES

# Shared work done once, before this replica answers anyone (ui/warm.py; ATTENTION_WARM=0: off).
streamlit_private.navigation_only()
if warm.enabled():
    warm.warm()

# Streamlit runs a full garbage collection after every script run, fragment reruns included;
# with pandas, Plotly and NumPy loaded that walked every object and cost ~90 ms of CPU per run
# (py-spy). Objects alive now live as long as the server: freeze them out of every collection.
gc.freeze()


def stuck() -> str | None:
    """Why this replica's trace store cannot compute, or None (the health check's question)."""
    return trace_store().stuck(time.monotonic())


# Health: /_stcore/health answers 503 while the store is stuck, so a wedged replica is replaced.
# Guard: every URL and body bounded before it is read, the routes' answers JSON (server/guard.py).
# StaticCache: Streamlit's own JavaScript and styles read and gzipped once per replica.
# The fault hook's routes exist only under ATTENTION_FAULT_HOOKS=1 (tests; server/faults.py).
# Under ATTENTION_PROFILE=<folder> every script run, cache miss, pass and request is written
# there (server/profile.py; `python -m bench arrivals` reads it); off, nothing is wrapped.
profiling = [Middleware(profile.ProfileMiddleware)] if profile.folder() else []
if profiling:
    streamlit_private.watch_runs()
app = st.App(
    "navigation.py",
    routes=ROUTES + faults.routes(trace_store),
    middleware=[
        *profiling,
        Middleware(HealthMiddleware, stuck=stuck),
        Middleware(Guard, body_caps=BODY_CAPS),
        Middleware(StaticCache),  # Streamlit's page files from memory, once read
    ],
)
