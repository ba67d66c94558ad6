"""Compare two sentences: the same head's patterns side by side, and one shared word's
contextual vectors compared layer by layer."""

import streamlit as st

from ui import router
from ui.text import compare

shared = router.shared()
st.title(f"Compare two sentences · layer {shared.layer}, head {shared.head}")
st.caption(compare.LEAD)
compare.require_model(shared.model)
traces = compare.sentences(shared)
st.subheader("One word, two contexts")
compare.one_word(shared, traces)
