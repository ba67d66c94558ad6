"""The attention explorer in a notebook: ``Explorer("the river bank", model="smollm2")`` is an
anywidget (Jupyter, VS Code, Colab, marimo) showing the same explorer as the app.

The engine runs in the kernel (``attention_core``: the model loads once per process, the
sentence's forward pass once per widget); the browser holds the raw scores and redraws every
switch itself. The view's state is traits, synced both ways: read ``w.layer`` after clicking
in the view, or set ``w.head = 4`` and the view follows. Numbers travel as raw float32 bytes,
one layer block at a time, when the browser asks for them (``Explorer.reply``). Nothing is
fetched from the network: the widget's module is assembled from ``explorer/js`` on import.

Needs the notebook extra: ``pip install -e ".[notebook]"`` or
``pip install -r requirements-notebook.txt``.
"""

from __future__ import annotations

import warnings
from functools import lru_cache
from typing import Any

import anywidget
import traitlets

from attention_core import MODEL_KEYS, load_model, trace_sentence
from attention_core.core.family import LoadedModel
from attention_core.core.family import Trace as TextTrace
from attention_core.core.tokens import MAX_CHARS, check_text
from attention_core.methods.pack import MAP_PARTS, PARTS, header, layer_block
from attention_core.methods.pack_map import head_block, head_request
from explorer import CSS, DEFAULT_STAGES, VIEW_FIELDS, check_stages
from explorer.bundle import module

TEMP_RANGE = (0.05, 5.0)  # the temperatures the app's slider and URL accept
Source = tuple[str, str]  # (model key, text): what a trace is of


# Worst case: one entry per packaged model (MODEL_KEYS: minilm 90 MB, smollm2 540 MB as float32).
@lru_cache(maxsize=len(MODEL_KEYS))
def load(name: str) -> LoadedModel:
    """The packaged model ``name`` ("minilm" or "smollm2"), loaded once per process (its
    arrays are read-only, so every widget may share it)."""
    return load_model(name)


def check_source(model: object, text: object) -> Source:
    """``(model, text)`` if a widget can show them, else ValueError saying what is wrong."""
    if isinstance(text, str) and not text.strip():
        raise ValueError("text is empty: give the explorer a sentence to read")
    valid = check_text(text, MAX_CHARS)  # a string of valid Unicode, not too long
    if model not in MODEL_KEYS:
        raise ValueError(f"unknown model {model!r}; choose one of {', '.join(MODEL_KEYS)}")
    return str(model), valid


def compute_trace(model: str, text: str) -> TextTrace:
    """The forward pass the app shows for ``text`` (``attention_core.trace_sentence`` with no
    what-if: the browser applies the switches itself). A text longer than the model reads is
    cut at its ``max_tokens``, with a warning, as the app cuts it."""
    model, text = check_source(model, text)
    trace = trace_sentence(load(model), text)
    if trace.tokens.n_cut:
        warnings.warn(
            f"{model} reads {trace.n_tokens} tokens: the last {trace.tokens.n_cut} were cut",
            stacklevel=3,
        )
    return trace


def _in_range(name: str, value: int, lo: int, count: int, what: str) -> int:
    """``value`` if lo <= value < count, else ValueError naming the range."""
    if isinstance(value, bool) or not lo <= value < count:
        raise ValueError(f"{name} {value} is outside {lo}..{count - 1} ({count} {what})")
    return value


class Explorer(anywidget.AnyWidget):
    """One sentence's attention, explored as in the app: stages, heads, keys, hover, the cell
    arithmetic, a what-if causal mask, √d_k, temperature.

    ``Explorer(text, model="minilm", *, stages=DEFAULT_STAGES, layer=0, head=0, q=-1, k=-1,
    causal=None, scale=True, temp=1.0, transpose=False, hide_special=False)``. ``model`` is
    "minilm" (all-MiniLM-L6-v2, an encoder) or "smollm2" (SmolLM2-135M-Instruct, a decoder).
    ``stages`` picks the panels, of explorer.STAGES: the pattern's four stages, "weighted" (the
    pattern times each key's value norm) and "rollout" (the layer's attention rollout).
    ``q``/``k`` choose a query/key cell (-1: none); ``causal`` None takes the model's own mask
    (on for a decoder, where it cannot be switched off).

    Every argument is a trait, synced with the view both ways. Bad values raise ValueError and
    leave the widget as it was: an empty or over-long text, an unknown model, a layer, head or
    token outside the model's range (numbers are refused, not clipped). Setting ``text`` or
    ``model_name`` runs the new pass; the layer and head are then clipped to the new model's
    range and the chosen cell is cleared.
    """

    _esm = module("widget")
    _css = CSS.read_text()

    model_name = traitlets.Unicode("minilm").tag(sync=True)
    text = traitlets.Unicode("").tag(sync=True)
    header = traitlets.Dict().tag(sync=True)  # attention_core.methods.pack.header of the trace
    layer = traitlets.Int(0).tag(sync=True)
    head = traitlets.Int(0).tag(sync=True)
    q = traitlets.Int(-1).tag(sync=True)  # the chosen query token, -1 for none
    k = traitlets.Int(-1).tag(sync=True)  # the chosen key token, -1 for none
    causal = traitlets.Bool(False).tag(sync=True)
    scale = traitlets.Bool(True).tag(sync=True)
    transpose = traitlets.Bool(False).tag(sync=True)
    hide_special = traitlets.Bool(False).tag(sync=True)
    temp = traitlets.Float(1.0).tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)  # why the last change failed, "" when fine
    stages = traitlets.List(traitlets.Unicode(), list(DEFAULT_STAGES)).tag(sync=True)  # panels

    def __init__(
        self,
        text: str,
        model: str = "minilm",
        *,
        layer: int = 0,
        head: int = 0,
        q: int = -1,
        k: int = -1,
        causal: bool | None = None,
        stages: tuple[str, ...] | list[str] = DEFAULT_STAGES,
        **switches: Any,
    ) -> None:
        shown = list(check_stages(stages))
        self._trace = compute_trace(model, text)  # checks them first
        self._source: Source = (model, text)
        first = header(self._trace)
        super().__init__(model_name=model, text=text, header=first, stages=shown)
        view = {"layer": layer, "head": head, "q": q, "k": k, **switches}
        view["causal"] = first["causal"] if causal is None else causal
        for name, value in view.items():
            if name not in VIEW_FIELDS:
                raise TypeError(f"Explorer() got an unknown switch {name!r}")
            setattr(self, name, value)
        self.on_msg(self._on_msg)

    @property
    def trace(self) -> TextTrace:
        """The engine's forward pass shown (a ``Trace``, or a ``LlamaTrace`` for SmolLM2): every
        intermediate as NumPy arrays, e.g. ``w.trace.pattern_lhqk[w.layer, w.head]``."""
        return self._trace

    def reply(self, msg: dict[str, Any]) -> tuple[dict[str, Any], list[bytes]]:
        """The answer to a message from the view: a layer block's raw little-endian float32
        bytes (``attention_core.methods.pack.layer_block``) for ``{"type": "block", "layer", "part",
        "id"}`` (a long sentence's "map" and "tile" carry head, stage, settings and window too:
        ``pack_map.head_request``), or the same content with an ``error`` and no bytes. The
        request's ``id`` comes back: the view matches each reply to its request by it."""
        layer, part = msg.get("layer"), msg.get("part")
        content: dict[str, Any] = {"type": "block", "layer": layer, "part": part}
        if "id" in msg:  # the view matches replies to requests by it
            content["id"] = msg["id"]
        if msg.get("type") != "block":
            return content | {"error": f"unknown message type {msg.get('type')!r}"}, []
        if isinstance(layer, bool) or not isinstance(layer, int):
            return content | {"error": f"layer must be a whole number, got {layer!r}"}, []
        if part not in PARTS + MAP_PARTS:
            return content | {"error": f"part must be one of {', '.join(PARTS + MAP_PARTS)}"}, []
        try:
            if part in MAP_PARTS:  # one head's stage under the view's switches (map mode)
                return content, [head_block(self._trace, head_request(msg))]
            return content, [layer_block(self._trace, layer, part).data]
        except ValueError as err:
            return content | {"error": str(err)}, []

    def _on_msg(self, _widget: object, msg: dict[str, Any], _buffers: object) -> None:
        content, buffers = self.reply(msg)
        self.send(content, buffers=buffers)

    @traitlets.validate("model_name")
    def _valid_model(self, proposal: Any) -> str:
        return check_source(proposal.value, "-")[0]

    @traitlets.validate("text")
    def _valid_text(self, proposal: Any) -> str:
        return check_source("minilm", proposal.value)[1]

    @traitlets.validate("layer", "head", "q", "k")
    def _valid_index(self, proposal: Any) -> int:
        name, value, shape = proposal.trait.name, proposal.value, self.header
        if name == "layer":
            return _in_range(name, value, 0, shape["n_layers"], "layers")
        if name == "head":
            return _in_range(name, value, 0, shape["n_heads"], "heads")
        return _in_range(name, value, -1, shape["n_tokens"], "tokens, or -1 for none")

    @traitlets.validate("stages")
    def _valid_stages(self, proposal: Any) -> list[str]:
        return list(check_stages(proposal.value))

    @traitlets.validate("temp")
    def _valid_temp(self, proposal: Any) -> float:
        lo, hi = TEMP_RANGE
        if not lo <= proposal.value <= hi:  # also refuses nan
            raise ValueError(f"temp {proposal.value} is outside {lo}..{hi}")
        return float(proposal.value)

    @traitlets.validate("causal")
    def _valid_causal(self, proposal: Any) -> bool:
        if self.header.get("causal") and not proposal.value:
            raise ValueError(f"{self.model_name} is a decoder: its causal mask is always on")
        return bool(proposal.value)

    @traitlets.observe("model_name", "text")
    def _source_changed(self, _change: Any) -> None:
        """Run the new pass; on failure put the old text and model back, say why, re-raise."""
        source = (self.model_name, self.text)
        if source == self._source:
            return
        try:
            trace = compute_trace(*source)
        except ValueError as err:
            with self.hold_trait_notifications():  # the pass shown is still the old one
                self.model_name, self.text = self._source
            self.error = str(err)
            raise
        self._show(source, trace)

    def _show(self, source: Source, trace: TextTrace) -> None:
        """Put ``trace`` in the view: its header, the layer and head clipped to its model, no
        chosen cell, the causal mask the model's own if it has one."""
        old, new = self.header, header(trace)
        self._trace, self._source = trace, source
        with self.hold_sync():
            self.header = new
            self.layer = min(self.layer, new["n_layers"] - 1)
            self.head = min(self.head, new["n_heads"] - 1)
            self.q = self.k = -1
            self.causal = new["causal"] or (self.causal and not old["causal"])
            self.error = ""
