"""Start here: what attention does, in a few sentences, and where each page takes you."""

import streamlit as st

from ui import router
from ui.cache import model_config, model_error
from ui.text import home

shared = router.shared()
st.title("Attention, step by step")
cfg, error = model_config(shared.model), model_error(shared.model)
home.intro(shared, cfg, error)
home.one_head(shared, cfg, error)
if not error and shared.text.strip():
    home.your_sentence(shared, router.opening_view(shared.model, shared.text))
st.subheader("Where to go")
home.where_to_go()
