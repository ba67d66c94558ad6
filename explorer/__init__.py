"""The attention explorer: a sentence's attention held in the browser, every switch (layer,
head, mask, √d_k, temperature, layout, zoom, the cell arithmetic) redrawn there without a round
trip. One JavaScript core (``js/``: small ES modules, bundled per entry by esbuild into the
committed ``dist/<entry>.js``, each module keeping its own scope; ``npm run build`` rebuilds them,
``bundle.py`` reads them, so the app needs no node), two adapters: the Streamlit app's
(``streamlit_adapter``: ``mount``, ``mount_grid``, ``mount_scores``, ``mount_step``,
``mount_cross``) and the notebook's (``notebook``: ``Explorer``, an anywidget). This package
imports neither Streamlit nor anywidget itself: each name is loaded on first use, so a notebook
never needs Streamlit.

Past ``attention_core.methods.pack_map.MAP_FROM`` tokens a layer of raw scores is too big to
send, and the view becomes a map (``js/map.js``, ``js/mapview.js``): one head's stage computed
on the server under the view's switches, pooled to the screen or cut into full-resolution tiles.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from explorer.notebook import Explorer
    from explorer.streamlit_adapter import (
        mount,
        mount_cross,
        mount_grid,
        mount_scores,
        mount_step,
    )

PATH = "/api/attention/block"  # where the browser fetches layer blocks (server/api.py serves it)
CSS = Path(__file__).parent / "explorer.css"  # the explorer's styles, for both adapters
VIEW_FIELDS = ("layer", "head", "causal", "scale", "temp", "transpose", "hide_special", "q", "k")
# The panels a view may show: the pattern's four stages (the default), the pattern times each
# key's value norm ("weighted", Kobayashi et al. 2020) and the layer's rollout (Abnar & Zuidema).
DEFAULT_STAGES = ("scores", "scaled", "masked", "pattern")
STAGES = (*DEFAULT_STAGES, "weighted", "rollout")
_LAZY = {
    "mount": "explorer.streamlit_adapter",
    "mount_grid": "explorer.streamlit_adapter",
    "mount_scores": "explorer.streamlit_adapter",
    "mount_step": "explorer.streamlit_adapter",
    "mount_cross": "explorer.streamlit_adapter",
    "Explorer": "explorer.notebook",
}
__all__ = [
    "CSS",
    "DEFAULT_STAGES",
    "PATH",
    "STAGES",
    "VIEW_FIELDS",
    "Explorer",
    "check_stages",
    "mount",
    "mount_cross",
    "mount_grid",
    "mount_scores",
    "mount_step",
]


def check_stages(stages: object) -> tuple[str, ...]:
    """``stages`` as a tuple if it names one or more of STAGES, each once, else ValueError."""
    if isinstance(stages, str) or not isinstance(stages, (list, tuple)):
        raise ValueError(f"stages must be a list or tuple of names, got {stages!r}")
    unknown = [s for s in stages if s not in STAGES]
    if unknown or not stages or len(set(stages)) != len(stages):
        raise ValueError(
            f"stages {tuple(stages)!r}: give one or more of {', '.join(STAGES)}, each once"
        )
    return tuple(stages)


def __getattr__(name: str) -> Any:
    """The adapters' names, imported when first asked for."""
    if name not in _LAZY:
        raise AttributeError(f"module 'explorer' has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name]), name)
