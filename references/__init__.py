"""The reference libraries our numbers are checked against: the code that runs each model as it
was published (transformers, sentence-transformers, CTranslate2), never our engine.

``references.text`` holds the oracles of the text models (MiniLM, SmolLM2) and how their numbers
are compared with ours; ``references.whisper`` Whisper's. The app's "Verify against the reference
library" buttons and the tests import them from here. No streamlit here, and the libraries
themselves are imported only inside the functions that use them: importing this package costs
nothing.
"""
