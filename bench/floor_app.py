"""The floor of the stack, not part of the app: the least a Streamlit page with a Plotly heatmap
does. Two sidebar sliders pick one n×n heatmap (n from the URL, ?n=12); no model, no other
element. ``python -m bench app --only floor`` times it as it times the app, so the two can be
compared in one run: what the app cannot beat on this machine while it uses Streamlit + Plotly.
"""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

n = int(st.query_params.get("n", "12"))
layer = st.sidebar.slider("Layer", 0, 5, key="layer")
head = st.sidebar.slider("Head", 0, 11, key="head")
z = np.random.default_rng(12 * layer + head).random((n, n), dtype=np.float32)
st.plotly_chart(go.Figure(go.Heatmap(z=z)), key="floor")
