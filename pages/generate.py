"""Generate, token by token: SmolLM2 writes one token per click; each step shows the new token's
attention over everything before it, the model's top guesses, and the KV cache it keeps."""

import streamlit as st

from ui import router
from ui.text import generate

router.shared()  # frames the run (sidebar, URL); the sidebar shows SmolLM2 here (ui.registry)
st.title("Generate, token by token")
st.caption(generate.LEAD)
generate.require_model()
prompt = generate.prompt()
generate.steps(prompt)
