"""Entry point: ``streamlit run app.py``. Routes to the pages and draws the shared sidebar."""

import streamlit as st

from ui import params, sidebar

st.set_page_config(
    page_title="Attention, step by step", page_icon=":material/visibility:", layout="wide"
)

PAGES = {
    "home": st.Page("pages/home.py", title="Start here", icon=":material/home:", default=True),
    "pattern": st.Page("pages/pattern.py", title="Attention pattern", icon=":material/grid_on:"),
}

st.session_state["_routed"] = True
params.init_from_url()
page = st.navigation(list(PAGES.values()))
params.defaults(page.url_path)
sidebar.render()
params.write_url(page.url_path)
page.run()
