// The anywidget adapter (explorer/notebook.py's Explorer): the same explorer in a notebook.
// The view's fields are the widget's traits, synced both ways: a change here sets the changed
// traits once the view is drawn (model.set, save_changes); a trait set in Python redraws here.
// The `stages` trait (the panels shown) is set from Python only; a change draws the view anew.
// Layer blocks come as custom messages with the bytes as a buffer (source.js messageSource).
// The contract with the Python side: the traits and Explorer.reply in explorer/notebook.py.

import { messageSource } from "./source.js";
import { createState } from "./state.js";
import { renderView } from "./view.js";

const FIELDS = ["layer", "head", "causal", "scale", "temp", "transpose", "hide_special", "q", "k"];

function viewOf(model) {
  return Object.fromEntries(FIELDS.map((name) => [name, model.get(name)]));
}

// After a draw: the traits the view changed, sent to the kernel in one go.
function syncTraits(model, view) {
  const changed = FIELDS.filter((name) => model.get(name) !== view[name]);
  for (const name of changed) model.set(name, view[name]);
  if (changed.length) model.save_changes();
}

// Draw the explorer for the model's current header; returns the cleanup.
function mountView(model, el) {
  const header = model.get("header");
  const limits = { layer: header.n_layers - 1, head: header.n_heads - 1 };
  const state = createState(viewOf(model), limits);
  const name = model.get("model_name");
  const source = messageSource(model, `widget\u0000${name}\u0000${model.get("text")}`);
  const onDrawn = (view) => syncTraits(model, view);
  const options = { header, state, source, model: name, onDrawn, widget: true, pageKeys: false };
  options.stages = model.get("stages"); // undefined (an older kernel): the four
  const stop = renderView(el, options);
  const follow = FIELDS.map((field) => {
    // Every field, not only this one: a kernel update sets several traits before the first
    // change event, and a view drawn with only one of them would set the others back.
    const onChange = () => state.set(viewOf(model));
    model.on(`change:${field}`, onChange);
    return () => model.off(`change:${field}`, onChange);
  });
  return () => {
    for (const off of follow) off();
    stop();
    source.close();
  };
}

function render({ model, el }) {
  const error = el.ownerDocument.createElement("p");
  error.className = "ax-error";
  const view = el.ownerDocument.createElement("div");
  el.replaceChildren(error, view);
  let cleanup = () => {};
  const mount = () => {
    cleanup();
    cleanup = model.get("header")?.n_tokens ? mountView(model, view) : () => {};
  };
  const showError = () => {
    error.textContent = model.get("error") || "";
    error.hidden = !error.textContent;
  };
  model.on("change:header", mount); // a new sentence or model
  model.on("change:stages", mount);
  model.on("change:error", showError);
  showError();
  mount();
  return () => {
    model.off("change:header", mount);
    model.off("change:stages", mount);
    model.off("change:error", showError);
    cleanup();
  };
}

export default { render };
