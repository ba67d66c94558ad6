// The Streamlit components-v2 adapter (explorer/streamlit_adapter.py mounts it): one default
// export that Streamlit runs on every mount and whenever the mount's data changes. data.mode
// picks the drawing: the explorer (default), "grid" (every head, a token may be pinned),
// "step" (a decoder's step) or "cross" (cross-attention, tokens × time).
// The explorer tells the server its view after drawing it (setStateValue, debounced) and keeps
// the view's fields named in data.defaults in the page's URL. The server hands the same data
// back after hearing of a view (ui/explore.py), so Streamlit does not run this again for it.

import { NO_PIN, renderGrid } from "./grid.js";
import { clipSource, httpSource } from "./source.js";
import { keptState } from "./state.js";
import { renderStep } from "./step.js";
import { renderCross } from "./cross.js";
import { renderView } from "./view.js";
import { decodeFloat32 } from "./protocol.js";

const TELL_AFTER_MS = 350;
const CLEANUPS = new WeakMap(); // the last run's cleanup by mount element

// The URL keeps `defaults`' fields, left out at their default.
function keepInUrl(view, defaults) {
  const url = new URL(window.location.href);
  for (const [name, fallback] of Object.entries(defaults)) {
    const value = view[name];
    const enc = typeof value === "boolean" ? (value ? "1" : "0") : String(value);
    if (value === fallback) url.searchParams.delete(name);
    else url.searchParams.set(name, enc);
  }
  if (url.href !== window.location.href) window.history.replaceState(window.history.state, "", url);
}

// The URL follows the drawn view once its frame is on screen (a history write costs
// milliseconds with a 512-token sentence in the URL); a key's release writes a pending one at
// once, so the URL is the view's by the time the key is up.
function urlKeeper(defaults) {
  let pending = null;
  let asked = false;
  const flush = () => {
    if (pending) keepInUrl(pending, defaults);
    pending = null;
  };
  const later = (view) => {
    pending = view;
    if (asked) return;
    asked = true;
    requestAnimationFrame(() =>
      setTimeout(() => {
        asked = false;
        flush();
      }, 0),
    );
  };
  window.addEventListener("keyup", flush, true);
  return { later, stop: () => window.removeEventListener("keyup", flush, true) };
}

function mountView({ data, parentElement, setStateValue, key }) {
  const { header } = data;
  const limits = { layer: header.n_layers - 1, head: header.n_heads - 1 };
  const state = keptState(key, `${data.model}\u0000${data.text}`, data.view, limits);
  let timer = 0;
  let told = JSON.stringify(state.get());
  const unsubscribe = state.subscribe(() => clearTimeout(timer)); // told only once drawn
  const url = urlKeeper(data.defaults);
  const onDrawn = (view) => {
    if (data.tell === false) return; // a fixed view: neither the URL nor the server follows it
    url.later(view);
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (JSON.stringify(view) === told) return;
      told = JSON.stringify(view);
      setStateValue("view", { ...view });
    }, TELL_AFTER_MS);
  };
  const inline = data.inline ? decodeFloat32(data.inline) : null; // small views carry scores
  const source = inline ? null : httpSource(data);
  const options = { header, state, source, inline, onDrawn, model: data.model, title: data.title };
  Object.assign(options, { stages: data.stages, controls: data.controls, pageKeys: true });
  const cleanup = renderView(parentElement, options);
  return () => {
    clearTimeout(timer);
    unsubscribe();
    url.stop();
    cleanup();
  };
}

// The pinned token is kept across reruns (a rerun redraws the grid) while the sentence stays.
function mountGrid({ data, parentElement, setTriggerValue, key }) {
  const pin = keptState(`${key}\u0000pin`, `${data.model}\u0000${data.text}`, NO_PIN);
  const onOpen = (open) => setTriggerValue("open", open);
  return renderGrid(parentElement, data, httpSource(data), onOpen, pin);
}

function mountStep({ data, parentElement, key }) {
  const state = keptState(key, "step", { layer: data.layer }, { layer: data.n_layers - 1 });
  return renderStep(parentElement, data, state);
}

// Cross-attention, tokens × time (cross.js), its layers fetched from the same route as the
// text models' (a stored clip's part "cross"); the opening layer, when small, came with the
// data and goes into the page's block cache as if fetched. The state adds the picked frame (-1: the
// token's own peak) to the server's {layer, head, token}: handed a new token, the view drops its
// frame. {layer, head, token} is told to the server after drawing, debounced, as the explorer
// tells its view.
function mountCross({ data, parentElement, setStateValue, key }) {
  const { header } = data;
  const limits = {
    layer: header.n_layers - 1,
    head: header.n_heads - 1,
    token: header.n_tokens - 1,
  };
  const given = { ...data.view, frame: -1 };
  const state = keptState(key, `${data.model}\u0000${data.clip}`, given, limits);
  let timer = 0;
  let told = JSON.stringify(data.view);
  const onDrawn = ({ layer, head, token }) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const wire = JSON.stringify({ layer, head, token });
      if (wire === told) return;
      told = wire;
      setStateValue("view", { layer, head, token });
    }, TELL_AFTER_MS);
  };
  const source = clipSource(data);
  if (data.opening) source.seed(data.view.layer, "cross", decodeFloat32(data.opening));
  const mel = data.mel ? decodeFloat32(data.mel) : null;
  const options = { header, state, source, onDrawn, mel, nBins: data.n_bins };
  Object.assign(options, { named: data.named, caption: data.caption });
  const cleanup = renderCross(parentElement, options);
  return () => {
    clearTimeout(timer);
    cleanup();
  };
}

// Streamlit runs this again when a mount's data changes but calls the returned cleanup only on
// unmount: run the previous run's cleanup first, or listeners pile up run after run.
export default function (args) {
  CLEANUPS.get(args.parentElement)?.();
  const mount =
    { grid: mountGrid, step: mountStep, cross: mountCross }[args.data.mode] || mountView;
  const cleanup = mount(args);
  const remove = () => {
    if (CLEANUPS.get(args.parentElement) === remove) CLEANUPS.delete(args.parentElement);
    cleanup();
  };
  CLEANUPS.set(args.parentElement, remove);
  return remove;
}
