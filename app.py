"""Entry point: ``streamlit run app.py``. Routes to the pages and draws the shared sidebar."""

import streamlit as st

from ui import registry, router

PAGES = [
    st.Page(page.path, title=page.title, icon=page.icon, default=page.name == "home")
    for page in registry.PAGES
]

page = st.navigation(PAGES)
router.frame(page.url_path)
page.run()
