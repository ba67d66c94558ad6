"""Listen: cross-attention (pages/listen.py): where the audio comes from (``source``), decoded once
(``decode``), heard by Whisper and kept (``cache``), the views of a heard clip (``views``) and its
check against the reference libraries (``verify``). Whisper itself is loaded by ``ui.cache``; the
page's session entries are declared in ``ui.state.listen``."""

from ui.presets import clip_names

__all__ = ["clip_names"]
