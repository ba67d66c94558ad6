"""Streamlit glue: the rooms the page scripts call, and the frame around every page.

A page script (``pages/<name>.py``) is its page's flow: it frames the run (``router.shared``, and
``router.require_trace`` where it needs the sentence's trace), writes the title, and calls its
room's sections in order. The room draws every widget and keeps every session entry; it lives in
the page's family: ``text/`` (the pages on a text model), ``tour/`` (Learn step by step),
``beyond/`` (Beyond the weights), ``listen/`` (Whisper's cross-attention). Pages define no
function: Streamlit keeps a callback or format function for the session, and one defined in a
page would keep the page's namespace (and the traces it names) alive.

Shared by every family: ``cache`` (the models and traces) and ``store`` (the trace store);
``state/`` (every session entry, declared once: one state per family) and ``params`` (the URL);
``router`` (the frame), ``sidebar`` and ``registry`` (the pages); ``explore`` (mounting the
attention explorer), ``widgets``, ``show``, ``safe``, ``downloads``, ``presets``; ``verify``
(what the verify buttons share); ``routes`` (the explorer's HTTP routes on these caches).

The only layer that imports streamlit besides ``app.py``, ``navigation.py``, ``server/`` and
``pages/``. Everything numeric comes from ``attention_core``; every chart from ``viz``; the
reference libraries the verify buttons check against from ``references``.
"""
