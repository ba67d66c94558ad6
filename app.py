"""Entry point: ``streamlit run app.py``. Routes to the pages and draws the shared sidebar."""

import streamlit as st

from ui import router

PAGES = [
    st.Page("pages/home.py", title="Start here", icon=":material/home:", default=True),
    st.Page("pages/learn.py", title="Learn step by step", icon=":material/school:"),
    st.Page("pages/pattern.py", title="Attention pattern", icon=":material/grid_on:"),
    st.Page("pages/all_heads.py", title="All heads", icon=":material/apps:"),
    st.Page("pages/values.py", title="Value updates ΔE", icon=":material/add_circle:"),
    st.Page("pages/embedding_shift.py", title="Embedding shift", icon=":material/scatter_plot:"),
    st.Page("pages/hide_word.py", title="What did that word do?", icon=":material/visibility_off:"),
    st.Page("pages/build_head.py", title="Build your own head", icon=":material/tune:"),
    st.Page("pages/compare.py", title="Compare sentences", icon=":material/compare_arrows:"),
]

page = st.navigation(PAGES)
router.frame(page.url_path)
page.run()
