"""How every page puts a figure or a table of numbers on screen: one chart config, one format."""

from __future__ import annotations

from types import ModuleType

import plotly.graph_objects as go
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from ui import glossary

# Where an element is drawn: a column, the sidebar, an expander, or the page itself (the st
# module, whose element functions draw in the main area).
Area = DeltaGenerator | ModuleType
CHART_CONFIG = {"displaylogo": False}  # Plotly's toolbar without its logo, on every chart
NUM = st.column_config.NumberColumn(format="%.4f")  # a table's numbers: four decimals
SIGNED = st.column_config.NumberColumn(format="%+.4f")  # differences: the sign shown
FINE = st.column_config.NumberColumn(format="%.6f")  # sums that should read exactly 1


def plot(fig: go.Figure, key: str, where: Area = st, caption: str | None = None) -> None:
    """Draw ``fig`` in ``where`` (the page, a column, the sidebar), with a caption below."""
    where.plotly_chart(fig, key=key, config=CHART_CONFIG)
    if caption:
        glossary.note(caption, where)
