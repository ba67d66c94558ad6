"""Start here: what attention does, in three sentences, and where each page takes you."""

import streamlit as st

from ui import sidebar

sidebar.shared("home")

st.title("Attention, step by step")
st.markdown(
    "A word on its own has a fixed vector. **Attention** lets every word look at the others "
    "and shift its vector according to what it finds: *bank* drifts toward *water* next to "
    "*river*, toward *money* next to *deposit*. This app runs a real trained model "
    "(all-MiniLM-L6-v2, 6 layers × 12 heads) on **your** sentence and shows every number on "
    "the way."
)
st.markdown("Type a sentence in the sidebar, or pick an example, then open a page:")
st.page_link(
    "pages/pattern.py",
    label="Attention pattern: one head, from Q·Kᵀ to softmax",
    icon=":material/grid_on:",
)
