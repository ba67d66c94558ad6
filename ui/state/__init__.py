"""Session state, declared once: every ``st.session_state`` entry the app keeps is an ``Entry``
(``entry``) with its key, its type and its default, declared as a class attribute of a state:
``shared`` holds what every page shares (the sidebar's settings, the frame's bookkeeping, the
verify buttons'), ``text``, ``tour``, ``beyond`` and ``listen`` each page family's. An entry the
URL keeps is a ``Url``, with the parser its text goes through; ``ui.params`` gathers them. A key
is written here and nowhere else: the widgets take it from its entry (``AllHeads.top.key``).
"""
