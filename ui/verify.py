"""What the "Verify against the reference library" buttons share (ui.text.verify on the pattern
and embedding pages, ui.listen.verify on Listen): the verdict of one check, its table and plain
sentence for differences past their tolerance, the install message when a library is missing.
The libraries themselves live in ``references``; they are imported only when a button is pressed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from references.text import INSTALL, Difference, missing, round_up
from ui import glossary, safe

BUTTON = "Verify against the reference library"


@dataclass(frozen=True)
class Verdict:
    """One check of a sentence: the differences, or why the tokens could not be compared."""

    differences: tuple[Difference, ...]
    token_problem: str  # "" when the reference tokenizer gives our token ids
    seconds: float  # how long the reference libraries took (loading included)


def verdict_line(diff: Difference) -> str:
    """A row's verdict, from the measured difference: "agree to within 0.000003"."""
    if diff.agrees:
        return f"agree to within {round_up(diff.relative)}{diff.scale}"
    return f"differ by up to {round_up(diff.relative)}{diff.scale}: more than expected"


def differ(lib: str, verdict: Verdict) -> str:
    """The sentence for differences past their tolerance: the worst one, and where it is."""
    worst = max(verdict.differences, key=lambda d: d.relative / d.tolerance)
    return (
        f"Our numbers and those of {lib} differ more than rounding explains: {worst.quantity} by "
        f"up to {round_up(worst.relative)}{worst.scale} ({safe.md(worst.where)})."
    )


def table(verdict: Verdict) -> None:
    rows = verdict.differences
    st.dataframe(
        {
            "compared": [d.quantity for d in rows],
            "largest difference": [
                np.format_float_positional(d.largest, 2, fractional=False, trim="-") for d in rows
            ],
            "verdict": [verdict_line(d) for d in rows],  # before "where": the wide column last
            "where": [d.where for d in rows],
        },
        key="verify_table",
        hide_index=True,
    )


def engineers(text: str) -> None:
    with st.expander("For engineers", expanded=False, icon=":material/code:"):
        st.markdown(text)


def lacking(model: str) -> bool:
    """Say how to install what ``model``'s check needs when some of it is missing."""
    lacking = missing(model)
    if lacking:
        glossary.box(
            f"This check needs {', '.join(lacking)}, which {'is' if len(lacking) == 1 else 'are'}"
            " not installed here. Install the reference libraries with this command, in the "
            "app's folder, then press the button again:",
            icon=":material/download:",
            kind="warning",
        )
        st.code(INSTALL[model], language="bash")
    return bool(lacking)
