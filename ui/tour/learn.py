"""Learn step by step (pages/learn.py): what the tour says it does, the navigation between its
steps (Previous, the step menu, Next), and each step's way out to the page that explores it."""

from __future__ import annotations

from types import ModuleType

import streamlit as st

from attention_core.core.family import Trace
from ui import glossary, registry, router, tour
from ui.cache import LABELS
from ui.state.tour import TOUR, Tour
from ui.widgets import numbered


def _number(name: str) -> int:
    return tour.ORDER.index(name) + 1


def move_step(by: int, last: int) -> None:
    """Previous/Next: ``by`` steps, within 1..``last``."""
    TOUR.step = min(last, max(1, TOUR.step + by))


def intro(shared: router.Shared, trace: Trace) -> None:
    """What the tour runs, and which steps run more than the sidebar's model; a note when the
    visitor picked another model (the tour teaches on MiniLM)."""
    scaling, masking, knockout, jobs, decoding, writing, cost = map(
        _number, ("scaling", "masking", "weight_effect", "jobs", "decoder", "writing", "cost")
    )
    glossary.note(
        f"A guided walk through one transformer layer, on your own sentence (change it in the "
        f"sidebar). The numbers and charts come from running {trace.config.name} on that "
        f"sentence, except where a step says otherwise: steps {masking}, {jobs} and {decoding} "
        f"also run the decoder SmolLM2 and steps {decoding} and {writing} the speech model "
        f"Whisper; steps "
        f"{scaling}, {masking}, {jobs} and {knockout} add what-ifs ({scaling}: the √d_k division "
        f"switched off; {masking}: a mask MiniLM was not trained with; {jobs} and {knockout}: "
        f"heads switched off), step {scaling} random "
        f"heads, step {jobs} random tokens and step {cost} times the model on random inputs, "
        "each named where it appears. Each step ends "
        "with a link to the page that explores it in full."
    )
    if (picked := router.last_pick()) != shared.model:
        glossary.box(
            f"The tour teaches on {LABELS[shared.model]}, an encoder, so the sidebar shows it "
            f"here; you picked {LABELS[picked]}, which the other pages keep showing. Step "
            f"{masking} shows the mask of a decoder (SmolLM2); step {jobs} its induction heads; "
            f"step {decoding} a decoder "
            f"(SmolLM2) and cross-attention (Whisper); step {writing} how Whisper writes a token."
        )


def navigation() -> tuple[int, ModuleType]:
    """The progress bar, Previous, the step menu and Next; the step shown and its module."""
    number, last = TOUR.step, tour.N_STEPS
    st.progress(number / last, text=f"Step {number} of {last}")
    c1, c2, c3 = st.columns([1, 4, 1], vertical_alignment="center")
    c1.button(
        "Previous",
        key=Tour.previous.key,
        on_click=move_step,
        args=(-1, last),
        disabled=number == 1,
        icon=":material/arrow_back:",
        width="stretch",
    )
    c2.selectbox(
        "Step",
        range(1, last + 1),
        key=Tour.step.key,
        label_visibility="collapsed",
        format_func=numbered(tour.titles(), first=1, sep=". "),
    )
    c3.button(
        "Next",
        key=Tour.next.key,
        on_click=move_step,
        args=(1, last),
        disabled=number == last,
        icon=":material/arrow_forward:",
        icon_position="right",
        width="stretch",
    )
    return number, tour.step(number)


def further(number: int, step: ModuleType) -> None:
    """The link to the page that explores the step, and the button to the next step."""
    page = registry.page(step.PAGE)
    hint = f" ({step.HINT})" if getattr(step, "HINT", "") else ""
    st.page_link(
        page.path, label=f"Explore further: {page.title}{hint}", icon=":material/open_in_new:"
    )
    if number < tour.N_STEPS:
        st.button(
            f"Next: {tour.titles()[number]}",
            key=Tour.next_bottom.key,
            on_click=move_step,
            args=(1, tour.N_STEPS),
            icon=":material/arrow_forward:",
            icon_position="right",
        )
