"""Embedding shift (pages/embedding_shift.py): the probe words (the sentence's own until the
visitor edits them), the token followed, the PCA plane every vector is drawn in, the probes'
cosines before and after context, and the token's path through the layers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attention_core import closest_token, fit_shift_plane
from attention_core.core.family import Trace
from attention_core.lessons.shift_words import plane_words, probe_move_words
from attention_core.methods.geometry import Pca, ProbeCosines, probe_cosines
from ui import downloads, glossary, params, router, safe, show
from ui.presets import auto_probes
from ui.state.text import EMBEDDING_SHIFT, EmbeddingShift
from ui.text.cache import read_probes
from ui.widgets import token_picker
from viz.embedding_shift import layer_name, make_embedding_shift, name_states
from viz.layer_similarity import make_layer_similarity
from viz.probe_similarity import RELATIVE, make_probe_similarity
from viz.token_trajectory import make_token_trajectory

NUM = show.SIGNED
# The tokens a plane is fitted to and drawn with: a long text's first ones (SmolLM2's 2,048
# tokens at 31 states are 63,000 vectors to fit, and as many arrows to draw).
PLANE_TOKENS = 512
F64 = NDArray[np.float64]


@dataclass(frozen=True)
class Shift:
    """The token followed, the probes, and the plane they are drawn in."""

    trace: Trace
    layer: int  # the sidebar's
    probes: list[str]
    vectors_lpd: F64  # the probes at every state
    token: int
    keep: NDArray[np.int64]  # the positions shown
    pca: Pca
    tokens_lt2: F64
    probes_lp2: F64

    @property
    def state(self) -> int:
        """The hidden state the sidebar's layer hands on."""
        return self.layer + 1

    @property
    def now(self) -> str:
        return layer_name(self.state, self.trace.config)  # "after layer 2"

    @property
    def last(self) -> str:
        return layer_name(len(self.trace.hidden_ltd) - 1, self.trace.config)  # "after layer 5"

    @property
    def focus(self) -> int:
        return int(np.searchsorted(self.keep, self.token))

    @property
    def who(self) -> str:
        return safe.token(self.trace.tokens.tokens[self.token])


def explained(s: Shift) -> Sequence[float]:
    """Each PCA axis's share of the variance (an array: the charts read it as a sequence)."""
    return cast(Sequence[float], s.pca.explained_ratio_c)


def intro(shared: router.Shared, trace: Trace) -> None:
    cfg = trace.config
    now = layer_name(shared.layer + 1, cfg)
    normed = bool(cfg.final_norm) and shared.layer == cfg.n_layers - 1
    glossary.note(
        "A word enters the model with a vector that no other word of the sentence has changed "
        "yet, its **embedding**: "
        + (
            "the word's own vector plus a vector for its position (so the same word in another "
            "place starts slightly differently), rescaled. "
            if trace.config.positions == "learned"
            else "the word's own vector, the same wherever it stands (this model marks positions "
            "by rotating queries and keys instead). "
        )
        + "Each layer then mixes in information from the other tokens. Layers count from 0, like "
        f"the sidebar's Layer slider: “{now}” is what layer {shared.layer} hands on"
        + (f", rescaled by the model's final {cfg.final_norm}" if normed else "")
        + ". Watch the vectors move, and measure which probe words a token moves towards or away "
        "from, compared with the others."
    )


def _probes(shared: router.Shared) -> tuple[list[str], F64]:
    """The probe words box (the sentence's own probes, unless the visitor edited them)."""
    es = EMBEDDING_SHIFT
    es.probes = auto_probes(es.probes, es.sentence, shared.text)
    es.sentence = shared.text
    raw = st.text_input(
        "Probe words, comma-separated (at most 12, each up to 40 characters)",
        key=EmbeddingShift.probes.key,
        max_chars=params.MAX_CHARS,
        help="Each probe is run through the model alone, as its own one-word sentence, and "
        "compared with the token at the same point: both embeddings, or both after one layer.",
    )
    probes, vectors_lpd, problems = read_probes(shared.model, raw)
    for problem in problems:
        glossary.box(safe.md(problem), kind="warning")
    if not probes:
        glossary.box("Add at least one probe word to compare the tokens with.")
    return probes, vectors_lpd


def follow(shared: router.Shared, trace: Trace) -> Shift:
    """The probes and the token menu (the token closest to the probes at first), and the plane
    fitted to both."""
    probes, vectors_lpd = _probes(shared)
    tokens, hidden = trace.tokens.tokens, trace.hidden_ltd
    every = shared.visible(trace)
    keep = every[:PLANE_TOKENS]
    if len(keep) < len(every):
        glossary.box(
            f"At this length the page follows the first {PLANE_TOKENS:,} tokens of "
            f"{len(every):,}: a plane fitted to every token at every layer takes far longer, and "
            "that many arrows would cover each other.",
            kind="warning",
        )
    token = token_picker(
        "Token to follow",
        EmbeddingShift.token.key,
        shared.text,
        keep,
        tokens,
        lambda: closest_token(tokens, hidden[0], vectors_lpd[0], probes),
    )
    params.write_url(EmbeddingShift.PAGE)  # the probe and token defaults just chosen
    pca, tokens_lt2, probes_lp2 = fit_shift_plane(hidden, keep, vectors_lpd)
    return Shift(trace, shared.layer, probes, vectors_lpd, token, keep, pca, tokens_lt2, probes_lp2)


def plane(s: Shift) -> None:
    """Every token's vector from its embedding to the last layer, in the plane."""
    tokens = s.trace.tokens.tokens
    fig = make_embedding_shift(
        s.tokens_lt2,
        s.probes_lp2,
        [tokens[i] for i in s.keep],
        s.probes,
        state=s.state,
        explained_c=explained(s),
        focus=s.focus,
        config=s.trace.config,
    )
    show.plot(fig, "es_plane")
    glossary.note(
        "How to read this: hollow circles are the tokens' **embeddings** ("
        + (
            "word and position"
            if s.trace.config.positions == "learned"
            else "the word alone: this "
            "model adds no position vector, it rotates queries and keys instead"
        )
        + ", before any layer: no context yet). Each arrow runs to the same token **after a "
        "layer**; stars are the probe words at the same point. Drag the slider or press Play to "
        f"go from the embedding to {s.last}; it opens {s.now}, the output of the sidebar's layer "
        f"{s.layer}. The plane is one PCA, fitted once on the vectors shown at every point, so "
        f"the axes stay put. {plane_words(s.pca.explained_ratio_c, s.trace.hidden_ltd.shape[-1])}"
        " The numbers below are exact."
    )


def cosines(s: Shift) -> ProbeCosines:
    return probe_cosines(s.trace.hidden_ltd[:, s.token], s.vectors_lpd)


def nearer(s: Shift) -> None:
    """The token's cosines with the probes, relative to their mean, before and after context."""
    cos = cosines(s)
    rel0, rel = cos.relative_lp[0], cos.relative_lp[s.state]
    left, right = st.columns([3, 2])
    fig = make_probe_similarity(rel0, rel, s.probes, after_label=s.now)
    show.plot(fig, "es_probe_bars", left)
    if len(s.probes) > 1:
        quoted = [safe.token(p) for p in s.probes]
        glossary.say(probe_move_words(cos, s.state, s.now, s.who, quoted), where=right)
    else:
        glossary.box(
            "With one probe the relative measure is always 0: add another to compare.", where=right
        )
    glossary.note(
        f"How to read this: the cosine of {s.who} with each probe, minus its average over all "
        f"the probes, in the embedding (blue) and {s.now} (orange). The probes pass through the "
        "model too, so every raw cosine drifts with them (their average goes from "
        f"{cos.mean_l[0]:.3f} to {cos.mean_l[s.state]:.3f}); subtracting the average removes "
        f"that shared drift. An orange bar above the blue one means context moved {s.who} "
        "towards that probe, compared with the other probes.",
        where=right,
    )
    _table(s, cos)


def _table(s: Shift, cos: ProbeCosines) -> None:
    table = {
        "relative · embedding": cos.relative_lp[0],
        f"relative · {s.now}": cos.relative_lp[s.state],
        "relative change": cos.change(s.state),
        "raw cosine · embedding": cos.raw_lp[0],
        f"raw cosine · {s.now}": cos.raw_lp[s.state],
    }
    st.dataframe(
        {"probe": s.probes} | table,
        key="es_table",
        hide_index=True,
        column_config=dict.fromkeys(table, NUM),
    )
    glossary.note(
        "relative = cosine − mean over the probes (the bars); raw cosine = before "
        "subtracting that mean."
    )
    downloads.csv_button(
        "cosines.csv",
        np.stack(list(table.values()), axis=1),
        s.probes,
        list(table),
        f"probe_cosines_{s.now.replace(' ', '_')}.csv",
        key="es_csv",
    )


def path(s: Shift) -> None:
    """The token's path through the layers, and its probe cosines at every point."""
    left, right = st.columns(2)
    fig = make_token_trajectory(
        s.tokens_lt2[:, s.focus],
        s.trace.tokens.tokens[s.token],
        s.probes_lp2[s.state],
        s.probes,
        probe_state=s.state,
        explained_c=explained(s),
        config=s.trace.config,
    )
    show.plot(fig, "es_trajectory", left)
    glossary.note(
        f"How to read this: dot E is the embedding of {s.who}; dot N is {s.who} after layer N, "
        f"up to {s.last}, in the same PCA plane as above. Stars are the probes {s.now}.",
        where=left,
    )
    if s.probes:
        cos = cosines(s)
        fig = make_layer_similarity(
            {p: cos.relative_lp[:, j] for j, p in enumerate(s.probes)}, mark_layer=s.state
        )
        show.plot(name_states(fig, RELATIVE, s.trace.config), "es_probe_lines", right)
        glossary.note(
            f"How to read this: the same measure as the bars (cosine of {s.who} with each probe "
            f"minus the average over the probes) at every point from the embedding to {s.last}. "
            f"The dotted line is {s.now}, shown above.",
            where=right,
        )


def engineers(s: Shift) -> None:
    hidden = s.trace.hidden_ltd
    with st.expander("For engineers", expanded=False):
        st.markdown(
            "- Hidden states: `hidden_ltd[0]` is the embedding ("
            + (
                "word + position + segment embeddings, LayerNormed"
                if s.trace.config.post_norm  # BERT LayerNorms its embedding; Llama normalizes last
                else "the word embedding row"
            )
            + f": what layer 0 receives); `hidden_ltd[l]` is the output of layer "
            f"l − 1, so the sidebar's layer {s.layer} is `hidden_ltd[{s.state}]`"
            + ("" if s.trace.config.post_norm else "; the last state is after the final RMSNorm")
            + ".\n"
            "- Probes: `embed_words` runs each probe alone (`[CLS] word [SEP]`) and averages its "
            "word pieces at every state, `[l, p, d]`.\n"
            "- Bars, table and lines: `attention_core.methods.geometry.probe_cosines(hidden_ltd"
            "[:, t], probes_lpd)`: `raw_lp` are the cosines at the same state, `mean_l` their "
            "mean over the probes, `relative_lp = raw_lp - mean_l[:, None]` (unchanged by any "
            "shift shared by all probes at a state), `change(l) = relative_lp[l] - "
            "relative_lp[0]`.\n"
            f"- Plane: `fit_shift_plane`, one PCA (SVD) over the kept tokens and the probes at "
            f"all {len(hidden)} states, `hidden_ltd[0]` to `hidden_ltd[{len(hidden) - 1}]`."
        )
