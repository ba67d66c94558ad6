"""The server room: what serves the app besides its pages. ``trace_store`` shares forward passes
between sessions, ``api`` is the explorer's HTTP route, and ``streamlit_private`` holds every
read of Streamlit's private state. It imports the engine, never ``ui`` (app.py wires them)."""
