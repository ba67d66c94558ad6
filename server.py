"""The server entry point: ``streamlit run server.py`` (what ./run.sh does).

app.py and the pages are the Streamlit app; this adds the one HTTP route the attention explorer
fetches a sentence's numbers from (explorer/api.py). Running ``streamlit run app.py`` still
serves every page, but the explorer then has nothing to fetch and says so.
"""

import streamlit as st

from explorer.api import ROUTES

app = st.App("app.py", routes=ROUTES)
