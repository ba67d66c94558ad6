"""Embedding shift's sentences against their numbers: the plane's share of the spread, and which
probe a token moved towards beyond the drift all probes share, or that it is equally near them
all (SmolLM2, "tired" after layer 13: every probe within a hair, measured 0.465-0.469)."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import trace_sentence
from attention_core.lessons.shift_words import (
    EVEN,
    ONE_DIRECTION,
    plane_words,
    probe_move_words,
)
from attention_core.methods.geometry import embed_words, probe_cosines

PROBES = ["river", "water", "money", "finance"]
CAT = "the cat sat on the mat because it was tired"


@pytest.mark.parametrize(("key", "state"), [("smollm2", 13), ("smollm2", 2), ("minilm", 3)])
def test_the_move_is_said_as_the_relative_cosines_read(key, state, request):
    model = request.getfixturevalue("model" if key == "minilm" else key)
    trace = trace_sentence(model, CAT)
    cos = probe_cosines(
        trace.hidden_ltd[:, -2 if key == "minilm" else -1], embed_words(model, PROBES)
    )
    raw = cos.raw_lp[state]
    rel = raw - raw.mean()  # the relative measure, by hand
    said = probe_move_words(cos, state, f"after layer {state - 1}", "tired", PROBES)
    if np.ptp(rel) < EVEN:
        assert said.startswith(f"After layer {state - 1}, tired is about equally near every probe")
        assert f"(raw cosines {raw.min():.3f} to {raw.max():.3f})" in said
        assert "moved most towards" not in said
    else:
        change = rel - (cos.raw_lp[0] - cos.raw_lp[0].mean())
        up, down = PROBES[int(np.argmax(change))], PROBES[int(np.argmin(change))]
        assert f"moved most towards {up} ({change.max():+.3f})" in said
        assert f"most away from {down} ({change.min():+.3f})" in said
    if (key, state) == ("smollm2", 13):  # measured: the equal case happens on a real model
        assert "about equally near every probe" in said


def test_one_probe_has_no_relative_measure(smollm2):
    cos = probe_cosines(trace_sentence(smollm2, CAT).hidden_ltd[:, -1], embed_words(smollm2, ["x"]))
    with pytest.raises(ValueError, match="two probes"):
        probe_move_words(cos, 1, "after layer 0", "tired", ["x"])


def test_the_plane_sentence_follows_its_first_axis():
    assert "first axis alone holds 97%" in plane_words(np.array([0.97, 0.02]), 576)
    assert plane_words(np.array([ONE_DIRECTION - 0.3, 0.1]), 384).startswith("It keeps 75%")
