"""Build your own attention block: heads, d_k, weights and switches, with every head's pattern
and update live; and the measurement that shows why the scores are divided by √d_k."""

import streamlit as st

from ui import router
from ui.text import build_head

shared = router.shared()
st.title("Build your own head")
st.caption(build_head.LEAD)
use_model = build_head.use_model(shared)
block = build_head.settings(shared, use_model)
build_head.input_and_weights(shared, block)
st.subheader("Each head's pattern")
build_head.patterns(block)
st.subheader("Combining the heads")
build_head.combining(block)
st.subheader("Why divide by √d_k?")
build_head.saturation(shared, block)
build_head.numbers(block)
