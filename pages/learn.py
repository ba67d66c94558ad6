"""Learn step by step: a guided tour from tokens to the encoder block, on the reader's sentence.

The steps live in ``ui.tour`` (one module each, in the registry's order); this page draws the
navigation (``ui.tour.learn``), the current step's heading and content, and its "explore further"
link.
"""

import streamlit as st

from ui import glossary, router
from ui.tour import learn
from ui.tour.common import keep_choices

shared = router.shared()  # the sidebar shows MiniLM here (ui.registry: the tour's model)
trace = router.require_trace(shared)
keep_choices()
glossary.heading("Learn step by step", level="title")
learn.intro(shared, trace)
number, step = learn.navigation()
glossary.heading(f"{number}. {step.TITLE}", level="header")
step.render(shared, trace)
st.divider()
learn.further(number, step)
