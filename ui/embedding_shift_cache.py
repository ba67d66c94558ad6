"""Cached probe-word vectors for the Embedding shift page.

Each probe is one short forward pass of its own; its per-layer mean vector (7 × 384 floats) is
small, so st.cache_data keeps one entry per (model, word), shared by every session.
"""

from __future__ import annotations

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attention_core import embed_words, parse_probes
from ui.cache import get_model


# Worst case 512 × 21.5 kB (7 × 384 float64) = 11 MB.
@st.cache_data(max_entries=512, show_spinner=False)
def _probe(model: str, word: str) -> NDArray[np.float64]:
    return embed_words(get_model(model), [word])[:, 0]  # [l,1,d] -> [l,d]


def probe_vectors(
    model: str, words: tuple[str, ...]
) -> tuple[list[str], NDArray[np.float64], list[str]]:
    """The probes the model could read, their vectors at every layer [l, p, d] (each word run
    alone through the model), and the probes it could not (no word pieces at all)."""
    kept, vectors, unreadable = [], [], []
    for word in words:
        try:
            vectors.append(_probe(model, word))
            kept.append(word)
        except ValueError:
            unreadable.append(word)
    if not vectors:
        cfg = get_model(model).config
        return kept, np.zeros((cfg.n_layers + 1, 0, cfg.d_model)), unreadable
    return kept, np.stack(vectors, axis=1), unreadable  # p × [l,d] -> [l,p,d]


def read_probes(model: str, raw: str) -> tuple[list[str], NDArray[np.float64], list[str]]:
    """Probe words typed as one comma-separated text: the ones kept, their vectors [l, p, d], and
    the problems to tell the visitor (too many, too long, unreadable by the model)."""
    probes, problems = parse_probes(raw)
    kept, vectors_lpd, unreadable = probe_vectors(model, tuple(probes))
    if unreadable:
        problems.append(f"Dropped {', '.join(unreadable)}: the model reads no word pieces in them.")
    return kept, vectors_lpd, problems
