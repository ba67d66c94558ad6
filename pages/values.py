"""Value updates ΔE: how one token's vector is nudged by a weighted sum of the others' values."""

import streamlit as st

from ui import router
from ui.text import values

shared = router.shared()
trace = router.require_trace(shared)
layer, head = shared.layer, shared.head
st.title(f"Value updates ΔE · layer {layer}, head {head}")
st.caption(values.LEAD)
followed = values.follow(shared, trace)
who = values.who(trace, followed)
st.subheader(f"1 · How much {who} takes from each token")
values.weights(trace, followed)
st.subheader("2 · The weighted sum of value vectors")
values.weighted_sum(trace, followed)
st.subheader(f"3 · From z to the new vector of {who}")
values.new_vector(trace, followed)
st.subheader(f"4 · Every head's proposal for {who}")
values.proposals(trace, followed)
st.subheader(f"5 · How much layer {layer} changes every token")
values.every_token(trace, followed)
values.engineers(followed)
