"""Learn step by step: a guided tour from tokens to the encoder block, on the reader's sentence.

The steps live in ``ui.tour`` (one module each, in the registry's order); this page draws the
navigation, the current step's heading and content, and its "explore further" link.
"""

import streamlit as st

from ui import callbacks, registry, router, tour
from ui.cache import LABELS
from ui.tour.common import keep_choices

shared = router.shared()  # the sidebar shows MiniLM here (ui.registry: the tour's model)
trace = router.require_trace(shared)
keep_choices()
titles = tour.titles()
last = tour.N_STEPS
scaling, masking, knockout, decoding, cost = (
    tour.ORDER.index(name) + 1
    for name in ("scaling", "masking", "weight_effect", "decoder", "cost")
)


st.title("Learn step by step")
st.caption(
    f"A guided walk through one transformer layer, on your own sentence (change it in the "
    f"sidebar). The numbers and charts come from running {trace.config.name} on that sentence, "
    f"except where a step says otherwise: steps {masking} and {decoding} also run the decoder "
    f"SmolLM2 and step {decoding} the speech model Whisper; steps {scaling}, {masking} and "
    f"{knockout} add what-ifs (the √d_k division switched off, a mask MiniLM was not trained "
    f"with, a head switched off), step {scaling} random heads and step {cost} times the model "
    "on random inputs, each named where it appears. Each step ends with a link to the page "
    "that explores it in full."
)
if (picked := router.last_pick()) != shared.model:
    st.info(
        f"The tour teaches on {LABELS[shared.model]}, an encoder, so the sidebar shows it here; "
        f"you picked {LABELS[picked]}, which the other pages keep showing. Step {masking} "
        f"shows the mask of a decoder (SmolLM2); step {decoding} a decoder (SmolLM2) and "
        "cross-attention (Whisper)."
    )
number = st.session_state["step"]
st.progress(number / last, text=f"Step {number} of {last}")
c1, c2, c3 = st.columns([1, 4, 1], vertical_alignment="center")
c1.button(
    "Previous",
    key="learn_prev",
    on_click=callbacks.move_step,
    args=(-1, last),
    disabled=number == 1,
    icon=":material/arrow_back:",
    width="stretch",
)
c2.selectbox(
    "Step",
    range(1, last + 1),
    key="step",
    label_visibility="collapsed",
    format_func=callbacks.numbered(titles, first=1, sep=". "),
)
c3.button(
    "Next",
    key="learn_next",
    on_click=callbacks.move_step,
    args=(1, last),
    disabled=number == last,
    icon=":material/arrow_forward:",
    icon_position="right",
    width="stretch",
)

step = tour.step(number)
st.header(f"{number}. {step.TITLE}")
step.render(shared, trace)
st.divider()
further = registry.page(step.PAGE)
hint = f" ({step.HINT})" if getattr(step, "HINT", "") else ""
st.page_link(
    further.path, label=f"Explore further: {further.title}{hint}", icon=":material/open_in_new:"
)
if number < last:
    st.button(
        f"Next: {titles[number]}",
        key="learn_next_bottom",
        on_click=callbacks.move_step,
        args=(1, last),
        icon=":material/arrow_forward:",
        icon_position="right",
    )
