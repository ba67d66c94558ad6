"""Placeholder until this page lands."""

import streamlit as st

from ui import sidebar

sidebar.shared("compare")
st.info("This page is being built.")
