"""The server entry point: ``streamlit run server.py`` (what ./run.sh does).

app.py and the pages are the Streamlit app; this adds the one HTTP route the attention explorer
fetches a sentence's numbers from (ui/api.py). Running ``streamlit run app.py`` still
serves every page, but the explorer then has nothing to fetch and says so.
"""

import gc

import pandas  # noqa: F401 - imported here so that gc.freeze() below covers them
import plotly.graph_objects  # noqa: F401
import streamlit as st

import viz.common  # noqa: F401
from ui.api import ROUTES

# Streamlit runs a full garbage collection after every script run, fragment reruns included;
# with pandas, Plotly and NumPy loaded that walked every object and cost ~90 ms of CPU per run
# (py-spy). Objects alive now live as long as the server: freeze them out of every collection.
gc.freeze()

app = st.App("app.py", routes=ROUTES)
