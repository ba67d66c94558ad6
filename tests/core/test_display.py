"""attention_core.core.display: the one naming of hidden states, one name per state of a real trace
(hidden_ltd[0] is the embedding, hidden_ltd[l + 1] what layer l puts out)."""

from __future__ import annotations

import pytest

from attention_core import trace_sentence
from attention_core.core.display import state_name
from viz.embedding_shift import layer_name


def test_each_state_is_named_for_the_layer_that_made_it(model):
    trace = trace_sentence(model, "The river bank was muddy")
    names = [state_name(s) for s in range(trace.hidden_ltd.shape[0])]
    assert names[0] == "embedding" and names[-1] == f"after layer {trace.config.n_layers - 1}"
    assert names[1:] == [f"after layer {layer}" for layer in range(trace.config.n_layers)]


def test_the_figures_use_the_engine_s_names():
    assert layer_name is state_name
    with pytest.raises(ValueError, match="negative"):
        state_name(-1)
