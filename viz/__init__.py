"""Plotly figure builders: one chart per module, each a pure function ending in ``return fig``.

They take NumPy arrays and token labels and return ``go.Figure``; no Streamlit calls, no
``fig.show()``. Shared conventions (colour scales, token axes, escaping) live in ``viz.common``.
"""
