"""server/streamlit_private.py reads Streamlit's private state; these tests fail loudly, naming the
installed Streamlit version, when an upgrade moves what it reads (requirements.txt pins the
tested minor version). Each read is checked inside a real script run (AppTest), not mocked."""

from __future__ import annotations

import streamlit as st
from streamlit.testing.v1 import AppTest

from server import streamlit_private
from server.streamlit_private import TESTED, StreamlitInternalsChanged

UPGRADE = (
    f"Streamlit {st.__version__} is installed; server/streamlit_private.py was written against "
    f"{TESTED}.x and its private reads no longer work: update it, then requirements.txt's pin."
)


def _script() -> None:
    """Run by AppTest: what the private reads see at the start of the run (where the app reads
    them: ui.params.init_from_url), then a keyed slider, toggle and text box."""
    import streamlit as st

    from server.streamlit_private import current_run, widget_values_sent

    run = current_run()
    st.session_state["_seen"] = {
        "sent": widget_values_sent(),
        "session": None if run is None else run[0],
        "wanted": None if run is None else run[1](),
    }
    st.slider("Layer", 0, 5, 2, key="layer")
    st.toggle("Causal", key="causal")
    st.text_input("Sentence", key="s")


def test_the_private_attributes_are_where_they_were() -> None:
    try:
        streamlit_private.check()
    except StreamlitInternalsChanged as err:
        raise AssertionError(f"{UPGRADE}\n{err}") from err


def test_the_installed_streamlit_is_the_tested_minor_version() -> None:
    assert st.__version__.startswith(TESTED + "."), UPGRADE


def test_a_run_sees_its_session_and_is_wanted() -> None:
    at = AppTest.from_function(_script).run()
    seen = at.session_state["_seen"]
    assert isinstance(seen["session"], str) and seen["session"], UPGRADE
    assert seen["wanted"] is True, UPGRADE


def test_the_values_the_browser_sent_are_read_as_a_url_writes_them() -> None:
    at = AppTest.from_function(_script).run()
    at.slider(key="layer").set_value(4)
    at.toggle(key="causal").set_value(True)
    at.text_input(key="s").input("the river bank")
    at.run()
    sent = at.session_state["_seen"]["sent"]
    assert {k: sent.get(k) for k in ("layer", "causal", "s")} == {
        "layer": "4",
        "causal": "True",
        "s": "the river bank",
    }, f"{UPGRADE}\nread: {sent}"


def test_outside_a_script_run_there_is_no_session_and_nothing_sent() -> None:
    assert streamlit_private.current_run() is None
    assert streamlit_private.widget_values_sent() == {}
