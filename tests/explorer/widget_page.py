"""The notebook widget's page for browser tests: the module of ``explorer.bundle.module("widget")``
loaded the way anywidget loads it (its text as a Blob, the object URL imported, ``render({model,
el})`` called) over a small stand-in for anywidget's model whose ``send`` is answered by a real
``Explorer.reply`` in this process, so every number the page draws is the engine's."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from explorer import Explorer
from explorer.bundle import module

ORIGIN = "http://widget.test/"  # answered by page.route: no server, no network
WAIT_MS = 30_000
SYNCED = ("model_name", "text", "header", "layer", "head", "q", "k", "causal", "scale")
SYNCED += ("transpose", "hide_special", "temp", "error", "stages")

# anywidget's side, small: a model over a plain object (Backbone's events: set fires
# change:<name> when the value changed), and the loader (Blob -> object URL -> import -> render).
# Buffers arrive as DataViews that do not start on a multiple of 4, as a comm's may not.
HARNESS = """<!doctype html><html><head><meta charset="utf-8"></head><body>
<script type="module">
function makeModel(state) {
  const handlers = new Map();
  const log = { sets: [], saves: [], sent: [] };
  let pending = {};
  const emit = (event, ...args) => {
    for (const cb of [...(handlers.get(event) ?? [])]) cb(...args);
  };
  const model = {
    log,
    get: (name) => state[name],
    set(name, value) {
      const old = state[name];
      state[name] = value;
      pending[name] = value;
      log.sets.push([name, value]);
      if (JSON.stringify(old) !== JSON.stringify(value)) emit(`change:${name}`, model, value);
    },
    on(event, cb) {
      if (!handlers.has(event)) handlers.set(event, new Set());
      handlers.get(event).add(cb);
    },
    off(event, cb) {
      if (!event) handlers.clear();
      else if (!cb) handlers.delete(event);
      else handlers.get(event)?.delete(cb);
    },
    save_changes() {
      log.saves.push(pending);
      pending = {};
    },
    kernel(changes) {  // the kernel sets traits (all, then the events): no echo in the log
      Object.assign(state, changes);
      for (const [name, value] of Object.entries(changes)) emit(`change:${name}`, model, value);
    },
    send(content) {
      log.sent.push(content);
      window.pyReply(JSON.stringify(content)).then(({ content: answer, data }) => {
        const raw = atob(data ?? "");
        const bytes = new Uint8Array(raw.length + 5);
        for (let i = 0; i < raw.length; i++) bytes[i + 1] = raw.charCodeAt(i);
        const buffers = data == null ? [] : [new DataView(bytes.buffer, 1, raw.length)];
        emit("msg:custom", answer, buffers);
      });
    },
  };
  return model;
}

window.start = async (esm, css, state) => {
  const style = document.createElement("style");
  style.textContent = css;
  document.head.append(style);
  const url = URL.createObjectURL(new Blob([esm], { type: "text/javascript" }));
  const mod = await import(url);
  URL.revokeObjectURL(url);
  const widget = typeof mod.default === "function" ? await mod.default() : mod.default;
  const model = makeModel(state);
  window.model = model;
  const el = document.createElement("div");
  document.body.append(el);
  await widget.initialize?.({ model });
  window.cleanup = await widget.render({ model, el });
};

// The kernel sets traits: the state changes and change:<name> fires, as a comm update does.
window.pyChange = (changes) => window.model.kernel(changes);
</script></body></html>"""


def asked(sent: list[dict[str, Any]], layer: int, part: str) -> bool:
    """Did the view ask for this block (a block message with its own request id)?"""
    return any(
        m.get("type") == "block"
        and (m.get("layer"), m.get("part")) == (layer, part)
        and isinstance(m.get("id"), int)
        for m in sent
    )


def reply(widget: Explorer, raw: str) -> dict[str, Any]:
    """``widget.reply`` to the page's message ``raw`` (JSON), its bytes as base64."""
    content, buffers = widget.reply(json.loads(raw))
    data = base64.b64encode(buffers[0]).decode("ascii") if buffers else None
    return {"content": content, "data": data}


@contextmanager
def widget_page(browser: Any, widget: Explorer, drawn: str) -> Iterator[Any]:
    """A page showing ``widget``'s module over the stand-in model once the JS condition
    ``drawn`` holds; on leaving, asserts the page logged no error."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.route(ORIGIN, lambda route: route.fulfill(body=HARNESS, content_type="text/html"))
    page.expose_function("pyReply", lambda raw: reply(widget, raw))
    page.goto(ORIGIN)
    state = {name: widget.get_state()[name] for name in SYNCED}
    page.evaluate("(args) => start(...args)", [module("widget"), widget._css, state])
    page.wait_for_function(drawn, timeout=WAIT_MS)
    try:
        yield page
        assert errors == []
    finally:
        context.close()
