"""Generate, token by token: SmolLM2 writes one token per click; each step shows the new token's
attention over everything before it, the model's top guesses, and the KV cache it keeps."""

import streamlit as st

from ui import router, safe
from ui.cache import model_error
from ui.text import generate, generation

router.shared()  # frames the run (sidebar, URL); the sidebar shows SmolLM2 here (ui.registry)
st.title("Generate, token by token")
st.caption(
    "This page runs SmolLM2-135M-Instruct, a decoder, so the sidebar shows it here: an encoder "
    f"such as MiniLM reads a sentence but cannot continue it. {generation.QUANTIZED}"
)
if error := model_error(generation.MODEL):
    st.error(f"SmolLM2 could not be loaded. {error}")
    st.stop()
cfg = generation.model().config
kept = st.session_state.get(generation.PROMPT, "The capital of France is")  # back from a page
prompt = st.text_input("Prompt", kept, key="gen_prompt", max_chars=2000)
if not prompt.strip():
    st.info("Type a prompt (a few words) and the model will guess what comes next.")
    st.stop()
try:
    generation.current(prompt)
except ValueError as err:
    st.info(f"The model cannot read this prompt: {safe.md(str(err))}")
    st.stop()


generate.steps(prompt)
