"""Learn step by step: a guided tour from tokens to the encoder block, on the reader's sentence.

The steps live in ``ui.tour`` (one module each, in the registry's order); this page draws the
navigation, the current step's heading and content, and its "explore further" link.
"""

import streamlit as st

from ui import callbacks, registry, router, tour
from ui.cache import DEFAULT_MODEL, LABELS
from ui.tour.common import keep_choices

shared = router.shared()
if shared.model != DEFAULT_MODEL:
    st.title("Learn step by step")
    st.info(
        f"The tour walks through an encoder layer on {LABELS[DEFAULT_MODEL]}, step by step; you "
        f"picked {LABELS[shared.model]}. Switch the model to take the tour, or see what a "
        "decoder does on the two pages made for it."
    )
    st.button(
        f"Take the tour on {LABELS[DEFAULT_MODEL]}",
        key="learn_switch",
        type="primary",
        on_click=router.use_model,
        args=(DEFAULT_MODEL,),
    )
    for name in ("decoder", "generate"):
        st.page_link(registry.page(name).path, label=registry.page(name).title)
    st.stop()
trace = router.require_trace(shared)
keep_choices()
titles = tour.titles()
last = tour.N_STEPS


st.title("Learn step by step")
st.caption(
    f"A guided walk through one transformer layer, on your own sentence (change it in the "
    f"sidebar). Every number and chart below comes from running {trace.config.name} on that "
    "sentence; each step ends with a link to the page that explores it in full."
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
