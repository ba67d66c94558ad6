"""Glossary: every term the pages use, each in one plain sentence (attention_core.lessons.glossary),
the same sentence a page hovers where the term first appears."""

import streamlit as st

from attention_core.lessons.glossary import TERMS
from ui import router

router.shared()
st.title("Glossary")
st.caption(
    "Every word the pages use that you may not know, each in one plain sentence, in the order "
    "the tour meets them. On the other pages the same sentence appears when you hover the small "
    "question mark beside the first text that uses the word."
)
for term in TERMS:
    st.markdown(f"**{term.name}**: {term.sentence}")
