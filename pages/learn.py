"""Learn step by step: a guided tour from tokens to the encoder block, on the reader's sentence."""

import streamlit as st

from ui import learn_steps, sidebar
from ui.learn_text import INTRO

shared = sidebar.shared()
trace = sidebar.require_trace(shared)
learn_steps.keep_choices()
st.title("Learn step by step")
st.caption(INTRO)
step = learn_steps.navigation()
learn_steps.render(step, shared, trace)
