"""Generate, token by token (pages/generate.py): the prompt, and the fragment of a generation step
and everything it changes (ui.text.generation keeps the session's generation)."""

from __future__ import annotations

import streamlit as st

from ui import glossary, safe
from ui.cache import model_error
from ui.state.text import GENERATE, Generate
from ui.text import generation

DEFAULT_PROMPT = "The capital of France is"
LEAD = (
    "This page runs SmolLM2-135M-Instruct, a decoder, so the sidebar shows it here: an encoder "
    f"such as MiniLM reads a sentence but cannot continue it. {generation.QUANTIZED}"
)


def require_model() -> None:
    """A message and a stopped page when SmolLM2 cannot load."""
    if error := model_error(generation.MODEL):
        st.error(f"SmolLM2 could not be loaded. {error}")
        st.stop()


def prompt() -> str:
    """The prompt box (the last generation's prompt, back from another page), the prompt read
    through the model; a message and a stopped page when there is nothing it can read."""
    kept = GENERATE.run_prompt if GENERATE.run_prompt is not None else DEFAULT_PROMPT
    text = str(st.text_input("Prompt", kept, key=Generate.prompt.key, max_chars=2000))
    if not text.strip():
        glossary.box("Type a prompt (a few words) and the model will guess what comes next.")
        st.stop()
    try:
        generation.current(text)
    except ValueError as err:
        glossary.box(f"The model cannot read this prompt: {safe.md(str(err))}")
        st.stop()
    return text


@st.fragment
def steps(prompt: str) -> None:
    """Everything a step changes: a click here reruns only this part of the page (a step is one
    token's work; the sidebar and the rest of the page stay as they are)."""
    run = generation.current(prompt)
    with st.expander("Sampling (optional): temperature, top-k, seed"):
        temp = st.slider(
            "Temperature (0 = always the most likely token)",
            0.0,
            2.0,
            0.0,
            0.1,
            key=Generate.temp.key,
            help="Divides the model's next-token scores before their softmax: how a token is "
            "picked. It leaves every attention pattern as trained (unlike the Attention pattern "
            "page's temperature, a what-if on the attention scores).",
        )
        top_k = st.number_input(
            "Top-k (0 = the whole vocabulary)", 0, 50, 0, key=Generate.top_k.key
        )
        seed = st.number_input(
            "Seed (the same seed repeats the same draws)", 0, 2**31 - 1, 0, key=Generate.seed.key
        )
    done, new = run.finished, generation.n_new(run)
    cols = st.columns(3)
    cols[0].button(
        "Next token",
        key=Generate.step.key,
        type="primary",
        disabled=done,
        on_click=generation.step_chosen,
        args=(temp, int(top_k), int(seed)),
    )
    cols[1].button(
        "Back one token", key=Generate.back.key, disabled=new == 0, on_click=generation.back
    )
    cols[2].button("Reset", key=Generate.reset.key, on_click=generation.reset)
    st.code(generation.text(run), language=None, wrap_lines=True)
    status = f"{new} of {generation.MAX_NEW} new tokens written."
    if done:
        status += " Finished: the model wrote its end token or reached the limit. Reset to start."
    glossary.note(status)

    left, right = st.columns([2, 3])
    with left:
        generation.show_guesses(run)
    with right:
        generation.show_heads(run)

    glossary.heading("What the model keeps: the KV cache", level="subheader")
    generation.show_cache(run)
