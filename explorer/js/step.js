// One generation step of a decoder: the newest token's attention over every token so far, one
// row per query head, for any layer. Every layer's rows come with the view (a few hundred kB at
// most), so the layer buttons redraw here, with no server round trip; the page sends a new view
// only when the model writes a token. Rows of heads that share a key/value head are grouped.

import { holderIn, labelAxis, paint, paintColourBar, SCALES, themeRgb } from "./draw.js";
import { headLabel, headsPerKv, sharing, startsGroup } from "./model.js";
import { placeTip } from "./pointer.js";
import { decodeFloat32 } from "./protocol.js";

const STEP_SKELETON = `
<div class="ax ax-step" tabindex="0" aria-label="The new token's attention, per head">
  <div class="ax-top"><h3 class="ax-title"></h3></div>
  <div class="ax-controls"><label>Layer <button data-step="-1" aria-label="previous layer">−</button>
    <select data-name="layer"></select><button data-step="1" aria-label="next layer">+</button>
  </label></div>
  <div class="ax-plot"><div class="ax-rows"></div><canvas class="ax-map"></canvas>
    <div class="ax-bar"><canvas></canvas><span class="ax-hi">1</span><span class="ax-lo">0</span>
    </div><div class="ax-cols"></div></div>
  <div class="ax-tip" role="tooltip" hidden></div>
</div>`;

// Drawn rows: the heads, with a blank row between two key/value groups (its index is -1).
function drawnRows(nHeads, per) {
  const drawn = [];
  for (let h = 0; h < nHeads; h++) drawn.push(...(startsGroup(h, per) ? [-1, h] : [h]));
  return drawn;
}

function drawStep(ctx, layer) {
  const { root, map, drawn, rows, n, nHeads } = ctx;
  const values = new Float32Array(drawn.length * n).fill(-Infinity);
  for (const [r, h] of drawn.entries()) {
    const at = (layer * nHeads + h) * n;
    if (h >= 0) values.set(rows.subarray(at, at + n), r * n);
  }
  const width = Math.min(720, Math.max(240, 18 * n));
  const height = 22 * drawn.length;
  map.style.width = `${width}px`;
  map.style.height = `${height}px`;
  const order = [...drawn.keys()];
  paint(map, values, n, order, [...Array(n).keys()], false, [0, 1], SCALES.weights, ctx.blank);
  labelAxis(root.querySelector(".ax-rows"), order, ctx.labels, height, true);
  labelAxis(root.querySelector(".ax-cols"), [...Array(n).keys()], ctx.tokens, width, false);
  root.querySelector(".ax-rows").style.height = `${height}px`;
  root.querySelector(".ax-bar").style.height = `${height}px`;
  root.querySelector('[data-name="layer"]').value = String(layer);
  root.querySelector(".ax-title").textContent = `layer ${layer}: one row per head`;
  root.dataset.layer = String(layer);
  root.dataset.n = String(n);
  root.dataset.drawnAt = String(performance.now()); // benchmarks time a step to here
  root.dataset.drawn = String(Number(root.dataset.drawn || 0) + 1);
}

function showStepTip(ctx, event, layer) {
  const { map, drawn, n, tip } = ctx;
  const rect = map.getBoundingClientRect();
  const c = Math.floor(((event.clientX - rect.left - map.clientLeft) / map.clientWidth) * n);
  const y = (event.clientY - rect.top - map.clientTop) / map.clientHeight;
  const r = Math.floor(y * drawn.length);
  const h = drawn[r];
  if (c < 0 || c >= n || h === undefined || h < 0) {
    tip.hidden = true;
    return;
  }
  const value = ctx.rows[(layer * ctx.nHeads + h) * n + c];
  const shared = sharing({ n_heads: ctx.nHeads, n_kv_heads: ctx.nKv }, h);
  tip.textContent = `head ${h} (${ctx.labels[r]}) → key “${ctx.tokens[c]}” (${c}): ${value.toFixed(3)}${shared}`;
  tip.dataset.value = String(value);
  placeTip(tip, ctx.root, event);
}

function stepContext(root, data) {
  const { n_layers: nLayers, n_heads: nHeads, n_kv_heads: nKv, tokens } = data;
  const per = headsPerKv(nHeads, nKv);
  const drawn = drawnRows(nHeads, per);
  return Object.freeze({
    root,
    nLayers,
    nHeads,
    nKv,
    tokens,
    drawn,
    n: tokens.length,
    rows: decodeFloat32(data.rows), // [layer, head, key], float32 as the engine's
    labels: drawn.map((h) => (h < 0 ? "" : headLabel(h, per))),
    map: root.querySelector(".ax-map"),
    tip: root.querySelector(".ax-tip"),
    blank: themeRgb(root, "--st-background-color", "#ffffff"),
  });
}

// Draw the step `data` (rows: base64 [layer, head, key], tokens, n_layers, n_heads,
// n_kv_heads) into `parent`; `state` holds {layer} (state.js), kept by the adapter.
export function renderStep(parent, data, state) {
  const holder = holderIn(parent);
  holder.innerHTML = STEP_SKELETON; // fixed markup; tokens only ever go in as textContent
  const root = holder.querySelector(".ax");
  const select = root.querySelector('[data-name="layer"]');
  for (let l = 0; l < data.n_layers; l++) select.add(new Option(String(l), String(l)));
  paintColourBar(root.querySelector(".ax-bar canvas"), SCALES.weights);
  const ctx = stepContext(root, data);
  const layer = () => state.get().layer;
  const unsubscribe = state.subscribe(() => drawStep(ctx, layer()));
  select.addEventListener("change", () => state.set({ layer: Number(select.value) }));
  root.addEventListener("click", (e) => {
    const step = e.target.closest && e.target.closest("[data-step]");
    if (step) state.set({ layer: layer() + Number(step.dataset.step) });
  });
  root.addEventListener("keydown", (e) => {
    if (e.key !== "ArrowUp" && e.key !== "ArrowDown") return;
    e.preventDefault();
    state.set({ layer: layer() + (e.key === "ArrowUp" ? -1 : 1) });
  });
  ctx.map.addEventListener("mousemove", (e) => showStepTip(ctx, e, layer()));
  ctx.map.addEventListener("mouseleave", () => {
    ctx.tip.hidden = true;
  });
  drawStep(ctx, layer());
  return unsubscribe;
}
