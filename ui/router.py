"""What runs around every page: URL parameters in, defaults, the shared sidebar, URL out.

app.py calls ``frame`` for the page st.navigation picked. While a ``pages/`` folder exists,
Streamlit runs a page the legacy way (without app.py) until some run has called
st.navigation: a fresh server's first deep link such as /pattern, and AppTest runs after a
switch_page. ``sidebar.shared()`` notices such a run, switches the server to st.navigation
routing and reruns, this time through app.py.
"""

from __future__ import annotations

import streamlit as st

from ui import params, sidebar
from ui.cache import opening_view

# Pages whose attention explorer holds layer, head and [CLS]/[SEP] (and reports them in a
# fragment rerun): the sidebar names them instead of drawing sliders that would go stale.
EXPLORER_PAGES = frozenset({"pattern"})


def frame(page: str) -> None:
    """Read the URL (first run only), set defaults, draw the sidebar, write the URL."""
    st.set_page_config(
        page_title="Attention, step by step", page_icon=":material/visibility:", layout="wide"
    )
    params.init_from_url()
    params.defaults(page)
    open_on_telling_view()
    sidebar.render(view_in_page=page in EXPLORER_PAGES)
    params.write_url(page)


def open_on_telling_view() -> None:
    """Once per session, when the link names no head: open on the sentence's curated (preset)
    or most telling head, and its query → key cell, instead of a fixed layer and head."""
    if st.session_state.get("_view_opened"):
        return
    st.session_state["_view_opened"] = True
    if "layer" in st.query_params or "head" in st.query_params:
        return
    view = opening_view(st.session_state["model"], st.session_state["s"])
    if view is None:
        return
    st.session_state["layer"], st.session_state["head"] = view[0], view[1]
    if "q" not in st.query_params and "k" not in st.query_params:
        st.session_state["q"], st.session_state["k"] = view[2], view[3]


def ensure_framed() -> None:
    """Rerun through app.py when this run skipped it (a legacy-routed run)."""
    from streamlit.runtime.pages_manager import PagesManager

    # The flag is server-wide: when several sessions open deep links on a fresh server at once,
    # one of them may switch it off while the others' legacy runs are already under way. Those
    # runs never went through frame(), which reads the URL first thing: rerun them too.
    if PagesManager.uses_pages_directory or not st.session_state.get("_url_read"):
        PagesManager.uses_pages_directory = False
        st.rerun()  # now through app.py, so widgets get the same identity on every run


def keep_shared_settings() -> None:
    """Call before st.switch_page: a page switch drops every widget's state, so the shared
    settings (sentence, layer, head, ...) are assigned again, which makes them survive it."""
    for name, param in params.PARAMS.items():
        if param.page is None:
            st.session_state[name] = st.session_state[name]
