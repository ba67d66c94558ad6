"""Inside a decoder: SmolLM2's own causal mask, the notes' word table on a real head, rotary
positions beside MiniLM's learned ones, grouped key/value heads, next-token guesses."""

import streamlit as st

from ui import router
from ui.text import decoder

shared = router.shared()  # the sidebar shows SmolLM2 here (ui.registry: the page's models)
st.title("Inside a decoder")
cfg = decoder.require_models()
st.caption(decoder.lead(cfg))
trace = decoder.require_trace(shared)
layer, head = shared.layer, shared.head
st.subheader("1 · Each token sees only itself and the tokens before it")
decoder.masked(trace, layer, head)
st.subheader("2 · The notes' “Dirty Quantum Plumbing” head, on a real decoder")
decoder.note_table(decoder.MODEL)
st.subheader("3 · Positions: rotated, not added")
decoder.positions(trace, layer, head)
st.subheader("4 · Query heads that share a key and a value")
decoder.groups(trace, layer)
st.subheader("5 · What it guesses next, at every position")
decoder.guesses(trace)
decoder.engineers(trace, layer, head)
