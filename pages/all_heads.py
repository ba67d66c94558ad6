"""All heads at once: what each head does (the role map), every layer's heads as small patterns,
their role scores, sorting."""

import streamlit as st

from ui import router
from ui.text import all_heads

shared = router.shared()
all_heads.open_picked_head()  # a head picked on the last run opens on the pattern page
trace = router.require_trace(shared)
st.title("All heads")
all_heads.intro(trace)
st.subheader("What each head does")
all_heads.role_map(shared, trace)
order = all_heads.controls(shared, trace)
all_heads.grid(shared, trace, order)
st.subheader("The heads as numbers")
all_heads.table(trace, order)
