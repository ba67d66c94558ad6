// The explorer's markup and its control bar: layer and head pickers, the switches, the
// temperature, the export buttons (the cross-attention view, cross.js, builds on it too).
// Controls change the view only through the state's set().

import { paintColourBar, scaleOf } from "./draw.js";
import { STAGES } from "./words.js";

const SKELETON = `
<div class="ax" tabindex="0" aria-label="Attention explorer">
  <div class="ax-top"><h3 class="ax-title"></h3>
    <span class="ax-role" title="what this head does on this sentence, by the stated rule"></span>
    <span class="ax-status" role="status"></span></div>
  <div class="ax-controls">
    <label>Layer <button data-step="layer:-1" aria-label="previous layer">−</button>
      <select data-name="layer"></select><button data-step="layer:1" aria-label="next layer">+</button></label>
    <label>Head <button data-step="head:-1" aria-label="previous head">−</button>
      <select data-name="head"></select><button data-step="head:1" aria-label="next head">+</button></label>
    <label><input type="checkbox" data-name="causal"> <span class="ax-causal">Causal mask</span></label>
    <label><input type="checkbox" data-name="scale"> Scale by √d_k</label>
    <label>Temperature <input type="range" data-name="temp" min="0.05" max="5" step="0.05">
      <output class="ax-temp"></output></label>
    <label><input type="checkbox" data-name="transpose"> Columns = queries</label>
    <label class="ax-special"><input type="checkbox" data-name="hide_special"> Hide [CLS] / [SEP]</label>
    <span class="ax-export">Save <button data-export="png" title="the panels as a PNG image">PNG</button>
      <button data-export="svg" title="the heatmaps as SVG, labels as text">SVG</button></span>
  </div>
  <p class="ax-hint"></p>
  <p class="ax-labels" hidden></p>
  <div class="ax-grid"></div>
  <div class="ax-tip" role="tooltip" hidden></div>
  <div class="ax-cell" aria-live="polite"></div>
</div>`;

const PANEL = `
<figcaption class="ax-stage"></figcaption>
<div class="ax-plot"><div class="ax-rows"></div><canvas class="ax-map"></canvas>
  <div class="ax-bar"><canvas></canvas><span class="ax-hi"></span><span class="ax-lo"></span></div>
  <div class="ax-cols"></div><div class="ax-box" hidden></div><div class="ax-pick" hidden></div></div>
<p class="ax-caption"></p>`;

// What the switches are, on the label or as its tooltip. A decoder (header.causal) was trained
// with its mask, so the switch is shown on and fixed; on an encoder the mask is a what-if, as
// are the √d_k switch and the temperature on every model. Without [CLS]/[SEP] the switch that
// hides them goes.
const TIPS = {
  scale:
    "The model divides every score by √d_k, the square root of how many numbers a query " +
    "has. Switching it off is a what-if.",
  temp:
    "A what-if: every score is divided by this number before softmax. The model uses 1; " +
    "below 1 the weights get sharper, above 1 flatter.",
  ownMask:
    "This model was trained with this mask: each token sees only itself and the tokens " +
    "before it. It is always on.",
  whatIfMask:
    "A what-if: this model was trained without a mask, reading every token both ways. " +
    "Switched on, each token sees only itself and the tokens before it, as in a decoder " +
    "such as SmolLM2, which this model was never trained to do.",
};

function describeModel(root, header) {
  const box = root.querySelector('[data-name="causal"]');
  box.disabled = !!header.causal;
  const label = root.querySelector(".ax-causal");
  label.textContent = header.causal ? "Causal mask (the model's own)" : "Causal mask (what-if)";
  box.closest("label").title = header.causal ? TIPS.ownMask : TIPS.whatIfMask;
  root.querySelector('[data-name="scale"]').closest("label").title = TIPS.scale;
  root.querySelector('[data-name="temp"]').closest("label").title = TIPS.temp;
  if (!header.special.some(Boolean)) root.querySelector(".ax-special").hidden = true;
}

function panel(grid, stage) {
  const fig = document.createElement("figure");
  fig.className = "ax-panel";
  fig.dataset.stage = stage;
  fig.innerHTML = PANEL;
  grid.appendChild(fig);
  paintColourBar(fig.querySelector(".ax-bar canvas"), scaleOf(stage));
  return fig;
}

// Show only the `controls` named (all when undefined; none and no hint when empty).
function pickControls(root, controls) {
  if (!controls) return;
  if (!controls.length) {
    root.querySelector(".ax-controls").hidden = true;
    root.querySelector(".ax-hint").hidden = true;
  }
  for (const el of root.querySelectorAll(".ax-controls [data-name]")) {
    if (!controls.includes(el.dataset.name)) el.closest("label").hidden = true;
  }
}

// Build the explorer inside `holder`: {root, panels (one <figure> per stage), stages}.
export function buildView(holder, header, { stages, controls, widget }) {
  holder.innerHTML = SKELETON; // fixed markup only: every token goes in as textContent
  const root = holder.querySelector(".ax");
  if (widget) root.classList.add("ax-widget");
  const grid = root.querySelector(".ax-grid");
  const drawn = stages || STAGES;
  const panels = drawn.map((stage) => panel(grid, stage));
  pickControls(root, controls);
  describeModel(root, header);
  for (const [name, count] of [
    ["layer", header.n_layers],
    ["head", header.n_heads],
  ]) {
    const select = root.querySelector(`[data-name="${name}"]`);
    for (let i = 0; i < count; i++) select.add(new Option(String(i), String(i)));
  }
  return { root, panels, stages: drawn };
}

// Put the view's values into the controls (those of fields the view has: a cross-attention
// view has no switches).
export function syncControls(root, view) {
  for (const el of root.querySelectorAll("[data-name]")) {
    if (!(el.dataset.name in view)) continue;
    const v = view[el.dataset.name];
    if (el.type === "checkbox") el.checked = !!v;
    else el.value = String(v);
  }
  if ("temp" in view) root.querySelector(".ax-temp").textContent = Number(view.temp).toFixed(2);
}

// Controls to state: selects and boxes, the temperature as it slides, the ± buttons; the
// export buttons call `onExport("png" | "svg")`.
export function wireControls(root, state, onExport) {
  root.addEventListener("change", (e) => {
    const name = e.target.dataset.name;
    if (!name) return;
    state.set({ [name]: e.target.type === "checkbox" ? e.target.checked : Number(e.target.value) });
  });
  root.addEventListener("input", (e) => {
    if (e.target.dataset.name === "temp") state.set({ temp: Number(e.target.value) });
  });
  root.addEventListener("click", (e) => {
    const step = e.target.closest && e.target.closest("[data-step]");
    if (step) {
      const [name, by] = step.dataset.step.split(":");
      state.set({ [name]: state.get()[name] + Number(by) });
    }
    const save = e.target.closest && e.target.closest("[data-export]");
    if (save) onExport(save.dataset.export);
  });
}
