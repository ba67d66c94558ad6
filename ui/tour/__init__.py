"""The guided tour (pages/learn.py): this registry, the order of its steps, one module per step;
the page's navigation (``learn``), what the steps share (``common``) and their cached computations
(``cache``); the tour's session entries are declared in ``ui.state.tour``.

Each step module holds its title (``TITLE``), the page that explores it further (``PAGE``, a
name from ``ui.registry``; ``HINT`` optionally says what to do there) and
``render(shared, trace)``, which writes its text and draws its figures. The modules are imported
when the tour asks for them, so that the URL's entries (``ui.state.tour``, gathered by
``ui.params``) can read the number of steps without importing the step modules, which import
``ui.params``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

ORDER: tuple[str, ...] = (
    "tokens",
    "positions",
    "queries",
    "scores",
    "softmax",
    "scaling",
    "masking",
    "values",
    "heads",
    "jobs",
    "weight_effect",
    "block",
    "decoder",
    "writing",
    "cost",
)
N_STEPS = len(ORDER)


def step(number: int) -> ModuleType:
    """The module of step ``number`` (1-based, as in the URL)."""
    if not 1 <= number <= N_STEPS:
        raise ValueError(f"step must be in [1, {N_STEPS}], got {number}")
    return importlib.import_module(f"ui.tour.{ORDER[number - 1]}")


def titles() -> tuple[str, ...]:
    """Every step's title, in order."""
    return tuple(step(k).TITLE for k in range(1, N_STEPS + 1))
