"""The Generate page's fragment: a generation step and everything it changes. Defined here, not in
pages/generate.py, so that the page's namespace dies with each run (ui/callbacks.py says why)."""

from __future__ import annotations

import streamlit as st

from ui.text import generation


@st.fragment
def steps(prompt: str) -> None:
    """Everything a step changes: a click here reruns only this part of the page (a step is one
    token's work; the sidebar and the rest of the page stay as they are)."""
    run = generation.current(prompt)
    with st.expander("Sampling (optional): temperature, top-k, seed"):
        temp = st.slider(
            "Temperature (0 = always the most likely token)", 0.0, 2.0, 0.0, 0.1, key="gen_temp"
        )
        top_k = st.number_input("Top-k (0 = the whole vocabulary)", 0, 50, 0, key="gen_top_k")
        seed = st.number_input(
            "Seed (the same seed repeats the same draws)", 0, 2**31 - 1, 0, key="gen_seed"
        )
    done, new = run.finished, generation.n_new(run)
    cols = st.columns(3)
    cols[0].button(
        "Next token",
        key="gen_step",
        type="primary",
        disabled=done,
        on_click=generation.step_chosen,
        args=(temp, int(top_k), int(seed)),
    )
    cols[1].button("Back one token", key="gen_back", disabled=new == 0, on_click=generation.back)
    cols[2].button("Reset", key="gen_reset", on_click=generation.reset)
    st.code(generation.text(run), language=None, wrap_lines=True)
    status = f"{new} of {generation.MAX_NEW} new tokens written."
    if done:
        status += " Finished: the model wrote its end token or reached the limit. Reset to start."
    st.caption(status)

    left, right = st.columns([2, 3])
    with left:
        generation.show_guesses(run)
    with right:
        generation.show_heads(run)

    st.subheader("What the model keeps: the KV cache")
    generation.show_cache(run)
