"""The Generate page's generation: one per session, kept in its session state (ui.state.text's
``Generate``), started from the prompt, stepped, taken back one token, reset; and what a step
shows of it (the guesses, the newest token's attention, the KV cache).

The model is the shared cached one (ui.cache.get_model): read-only. What a session changes, the
KV cache and its tokens, lives in its own Generation object, never in a cache.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import cast

import numpy as np
import streamlit as st

import explorer
from attention_core import Generation, choose, family_of, start_generation, trace_nbytes
from attention_core.models import tokenize
from attention_core.models.llama.model import LlamaModel
from server.budget import Busy, reserved
from ui import glossary, safe, show
from ui.cache import get_model, trace_store
from ui.state.text import GENERATE, Generate
from ui.text.decoder import MODEL, QUANTIZED, piece
from viz.next_token import make_next_token_bars

__all__ = ["MODEL", "QUANTIZED", "piece"]  # the page reads them from here
MAX_NEW = 64  # new tokens a generation may write


@dataclass(frozen=True)
class Timing:
    """How long the latest forward pass took, and over how many new tokens it ran."""

    tokens: int
    seconds: float


def model() -> LlamaModel:
    """The packaged decoder (``MODEL``), which writes text (its family offers the next token)."""
    loaded = get_model(MODEL)
    if not family_of(loaded).offers.next_token:
        raise TypeError(f"{MODEL!r} did not load as a decoder")
    return cast(LlamaModel, loaded)  # start_generation runs SmolLM2's family


def text(run: Generation) -> str:
    """The prompt and what the model wrote, decoded as one text."""
    return model().tokenizer.decode([int(i) for i in run.ids])


def _timed(kind: str, run: Generation, tokens: int, started: float) -> None:
    GENERATE.run = run
    GENERATE.times = {**GENERATE.times, kind: Timing(tokens, time.perf_counter() - started)}


def start(prompt: str) -> None:
    """Read the prompt through the model (the prefill); ValueError when it has no token,
    ``Busy`` when the memory budget has no room for the pass (a trace's bytes of the prompt)."""
    started = time.perf_counter()
    peak = trace_nbytes(model().config, len(tokenize(model(), prompt)) + MAX_NEW)
    with reserved(trace_store(), peak):
        run = start_generation(model(), prompt, max_new_tokens=MAX_NEW)
    GENERATE.run_prompt = prompt
    GENERATE.times = {}
    _timed("prefill", run, run.n_prompt, started)


def current(prompt: str) -> Generation:
    """This session's generation of ``prompt``, started afresh when the prompt changed."""
    if GENERATE.run is None or GENERATE.run_prompt != prompt:
        try:
            start(prompt)
        except Busy as err:
            glossary.box(str(err), icon=":material/hourglass_empty:", kind="warning")
            st.stop()
    return cast(Generation, GENERATE.run)


def n_new(run: Generation) -> int:
    return len(run.ids) - run.n_prompt


def write(token_id: int) -> None:
    """Feed one token through the model (one step on the KV cache)."""
    run: Generation = GENERATE.run
    if run.finished:
        return
    started = time.perf_counter()
    _timed("step", run.step(int(token_id)), 1, started)


def step_chosen(temperature: float, top_k: int, seed: int) -> None:
    """Feed the token the sampling settings choose (greedy at temperature 0)."""
    run: Generation = GENERATE.run
    write(choose(run.last, temperature=temperature, top_k=top_k, seed=seed, step_index=n_new(run)))


def back() -> None:
    """Take the newest token back, to choose another candidate in its place."""
    run: Generation = GENERATE.run
    if n_new(run) > 0:
        GENERATE.run = run.rewind(len(run.ids) - 1)


def reset() -> None:
    """Forget the written tokens: the prompt alone again (kept as it is when busy)."""
    try:
        start(cast(str, GENERATE.run_prompt))  # a reset follows a start
    except Busy as err:
        st.toast(str(err))


VOCAB_LAYER = (
    "Where the scores come from: after the last layer (and a final RMSNorm), the newest "
    "token's vector of {d} numbers goes through one linear layer, a table of {vocab:,} rows, one "
    "per vocabulary token (in SmolLM2 the same table as its token embeddings); each row's dot "
    "product with the vector is that token's score, and softmax turns the scores into these "
    "probabilities."
)


def show_guesses(run: Generation) -> None:
    """The model's top 10 for the next token as bars, and a menu to write another of them."""
    last, cfg = run.last, run.model.config
    guesses = [piece(i) for i in last.top_ids_k]
    probs = dict(zip(map(int, last.top_ids_k), map(float, last.top_probs_k), strict=True))
    glossary.heading("Its guesses for the next token", level="subheader")
    show.plot(
        make_next_token_bars(guesses, last.top_probs_k),
        "gen_guesses",
        caption="The ten most likely next tokens: the model's softmax over all "
        f"{cfg.vocab_size:,} tokens of its vocabulary (at temperature 1). Next token takes the "
        "top one, or draws one with the sampling settings. "
        + VOCAB_LAYER.format(vocab=cfg.vocab_size, d=cfg.d_model),
    )
    pick = st.selectbox(  # a key per length: each step's candidates are a new menu
        "Or write another of these",
        [int(i) for i in last.top_ids_k],
        key=f"{Generate.PICK}{len(run.ids)}",
        format_func=lambda i: f"{piece(i)} ({probs[i]:.1%})",
    )
    st.button(
        "Write this one",
        key=Generate.write.key,
        disabled=run.finished,
        on_click=write,
        args=(pick,),
    )


def show_heads(run: Generation) -> None:
    """The newest token's attention over every token so far, one row per head; the layer is
    picked in the view itself (every layer's rows come with it: no rerun to switch)."""
    last, cfg = run.last, run.model.config
    group = cfg.n_heads // cfg.n_kv_heads
    glossary.heading(f"What {safe.token(run.tokens[last.position])} looked at", level="subheader")
    explorer.mount_step(
        last.pattern_lhk,
        run.tokens[: last.position + 1],
        cfg.n_kv_heads,
        cfg.n_layers // 2,
        key=Generate.heads.key,
    )
    groups = "; ".join(
        f"heads {g * group}-{g * group + group - 1} share key/value head {g}"
        for g in range(cfg.n_kv_heads)
    )
    glossary.note(
        "Each row is one head's weights (they sum to 1) over every token so far, the newest "
        f"last: it sees nothing after itself. {groups[:1].upper() + groups[1:]} (a gap between "
        "groups). Hover a cell for "
        "its weight; − / + or ↑ ↓ change the layer."
    )


def show_cache(run: Generation) -> None:
    """The KV cache as what the model keeps: tokens, layers, bytes; the steps' times; shapes."""
    cfg = run.model.config
    n_cached, kept = len(run.ids), run.k_lgte.nbytes + run.v_lgte.nbytes
    per_token = 2 * cfg.n_layers * cfg.n_kv_heads * cfg.d_head
    m = st.columns(4)
    glossary.metric("tokens kept", n_cached, where=m[0])
    glossary.metric("layers", cfg.n_layers, where=m[1])
    glossary.metric("key/value heads per layer", cfg.n_kv_heads, where=m[2])
    glossary.metric("bytes kept", f"{kept / 1024:,.0f} KiB", where=m[3])
    glossary.say(
        f"For each token so far, every layer keeps a key and a value for each of its key/value "
        f"heads ({cfg.d_head} numbers each): {per_token:,} numbers per token. The newest token "
        "needs only its own query, key and value, and reads the others from here: one token's "
        "work per step, instead of running the whole text through the model again. "
        f"(Room is set aside for {run.n_prompt + run.max_new_tokens} tokens: "
        f"{run.cache_nbytes / 1024:,.0f} KiB.)"
    )
    times = GENERATE.times
    if "prefill" in times:
        glossary.note(
            f"Reading the {times['prefill'].tokens}-token prompt took "
            f"{times['prefill'].seconds * 1000:.0f} ms"
            + (
                f"; the last step, one token, {times['step'].seconds * 1000:.0f} ms."
                if "step" in times
                else "."
            )
        )
    with st.expander("For engineers"):
        st.code(
            f"k cache {tuple(run.k_lgte.shape)}, v cache {tuple(run.v_lgte.shape)} "
            f"(layers, KV heads, tokens, d_head), {run.cache_nbytes:,} bytes\n"
            f"new token's pattern {tuple(run.last.pattern_lhk.shape)}; rows sum to 1 within "
            f"{np.abs(run.last.pattern_lhk.sum(-1) - 1).max():.1e}\n"
            f"ids {list(map(int, run.ids))}",
            language=None,
        )
