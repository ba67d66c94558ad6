"""Streamlit glue shared by the pages: caching, URL parameters, the sidebar, presets, downloads.

The only layer that imports streamlit besides ``app.py``, ``navigation.py``, ``server/`` and
``pages/``. Everything numeric comes from ``attention_core``; every chart from ``viz``.
"""
