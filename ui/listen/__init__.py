"""Listen: cross-attention (pages/listen.py): where the audio comes from (``source``), decoded once
(``decode``), heard by Whisper and kept (``cache``), the views of a heard clip (``views``) and its
check against the reference libraries (``verify``). Whisper itself is loaded by ``ui.cache``; the
page's session entries are declared in ``ui.state.listen``."""

from ui.presets import CLIPS, clip_names  # tests/explorer/test_cross_browser.py reads them here

__all__ = ["CLIPS", "clip_names"]
