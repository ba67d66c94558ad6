"""The script Streamlit runs for every page view (app.py serves it): the navigation between the
pages of ui/registry.py, then the shared frame (sidebar, URL state) and the chosen page."""

import streamlit as st

from ui import registry, router

PAGES = [
    st.Page(page.path, title=page.title, icon=page.icon, default=page.name == "home")
    for page in registry.PAGES
]

page = st.navigation(PAGES)
router.frame(page.url_path)
page.run()
