// Cross-attention, tokens × time: one row per written token, one column per 20 ms of the
// audio over the speech span, for any decoder layer and head, under a strip of the sound itself
// (the log-mel, low pitches at the bottom) on the same time axis: frame f of the strip sits
// above column f of the matrix. The opening head comes with the view (float32, the engine's
// softmaxed weights); another is fetched once from the server when first shown (crossheads.js),
// and once the visitor has switched, the heads one step away are fetched ahead; a head here
// switches with no round trip: the selects, − +, ↑ ↓ on the focused view (layer) and ← →
// anywhere on the page (head), as in the explorer. Hover a cell for its weight, the strip for
// the time; click a cell for the readout (its moment is outlined in the strip), and the page
// hears {layer, head, token}.
//
// The view's context is frozen: what is fixed for it at the top, and the parts that change as
// small objects, each written by one module only: ctx.weights (the head on screen), ctx.pick (the
// picked moment) and ctx.life here, ctx.sound in crossstrip.js; {layer, head, token} is the
// state's (state.js).

import { holderIn, labelAxis, paint, paintColourBar, SCALES, themeRgb } from "./draw.js";
import { fileName, save } from "./export.js";
import { placeTip, wireKeys } from "./pointer.js";
import { crossHeads } from "./crossheads.js";
import { drawStrip, markStrip, setUpStrip, wireStripPointer } from "./crossstrip.js";
import {
  checkHead,
  crossRange,
  crossReadout,
  crossSeconds,
  crossTicks,
  crossTip,
  frameAt,
  frameLeft,
  neighbours,
  secondsText,
} from "./crossdata.js";

const CROSS_SKELETON = `
<div class="ax ax-cross" tabindex="0" aria-label="Cross-attention, tokens × time">
  <div class="ax-top"><h3 class="ax-title"></h3></div>
  <div class="ax-controls">
    <label>Layer <button data-by="-1" data-field="layer" aria-label="previous layer">−</button>
      <select data-name="layer"></select>
      <button data-by="1" data-field="layer" aria-label="next layer">+</button></label>
    <label>Head <button data-by="-1" data-field="head" aria-label="previous head">−</button>
      <select data-name="head"></select>
      <button data-by="1" data-field="head" aria-label="next head">+</button></label>
    <span class="ax-export">Save <button data-export="png">PNG</button>
      <button data-export="svg">SVG</button></span>
  </div>
  <div class="ax-plot">
    <div class="ax-strip-title" hidden>The sound: pitch (low → high) over time</div>
    <div class="ax-strip-axis" hidden><span class="ax-hi">high</span><span class="ax-lo">low</span>
    </div><canvas class="ax-strip" role="img" aria-label="The sound over time" hidden></canvas>
    <div class="ax-rows"></div><canvas class="ax-map"></canvas>
    <div class="ax-bar"><canvas></canvas><span class="ax-hi">1</span><span class="ax-lo">0</span>
    </div><div class="ax-cols ax-time"></div><div class="ax-box" hidden></div>
    <div class="ax-strip-mark" hidden></div></div>
  <p class="ax-caption"></p>
  <div class="ax-cell" aria-live="polite"></div>
  <div class="ax-tip" role="tooltip" hidden></div>
</div>`;

function drawCross(ctx) {
  const t0 = performance.now();
  const { root, map, shape, tokens, first } = ctx;
  const view = ctx.state.get();
  showHead(ctx, view);
  const rows = ctx.heads.peek(view.layer, view.head);
  if (!rows || rows.error) {
    waitFor(ctx, view); // a head that failed before is asked again: the server may have it now
    return;
  }
  checkHead(rows, shape);
  ctx.weights.rows = rows;
  delete root.dataset.waiting;
  map.classList.remove("ax-waiting");
  const width = Math.max(320, Math.min(1200, (root.clientWidth || 760) - 150));
  const height = Math.min(560, Math.max(60, 18 * shape.nTokens));
  map.style.width = `${width}px`;
  map.style.height = `${height}px`;
  const order = [...Array(shape.nTokens).keys()];
  const frames = [...Array(shape.nFrames).keys()];
  const range = crossRange(rows);
  ctx.weights.range = range;
  paint(map, rows, shape.nFrames, order, frames, false, range, SCALES.weights, ctx.blank);
  drawStrip(ctx, frames, width);
  root.querySelector(".ax-bar .ax-hi").textContent = range[1].toFixed(2);
  labelAxis(root.querySelector(".ax-rows"), order, tokens, height, true);
  root.querySelector(".ax-rows").style.height = `${height}px`;
  root.querySelector(".ax-bar").style.height = `${height}px`;
  drawTicks(root.querySelector(".ax-time"), crossTicks(first, shape.nFrames, width), ctx, width);
  showCell(ctx);
  root.dataset.view = JSON.stringify(view);
  root.dataset.drawMs = String(performance.now() - t0);
  root.dataset.drawn = String(Number(root.dataset.drawn || 0) + 1);
  if (ctx.life.switched) ctx.heads.prefetch(neighbours(view, shape)); // never for the opening view
  ctx.onDrawn(view);
}

// The controls and the title follow the view at once, before its head has arrived.
function showHead(ctx, view) {
  for (const name of ["layer", "head"]) {
    ctx.root.querySelector(`[data-name="${name}"]`).value = String(view[name]);
  }
  const named = ctx.named.has(`${view.layer},${view.head}`) ? " (an alignment head)" : "";
  ctx.root.querySelector(".ax-title").textContent =
    `Layer ${view.layer}, head ${view.head}${named}`;
}

// The head is not here yet: say so, fetch it, and draw it if the view still wants it; or say
// why it did not come (`error`: the server no longer holds the clip, or did not answer). Only
// a switch of the view asks again, so a failure never loops.
function waitFor(ctx, view, error) {
  const { root, map } = ctx;
  ctx.weights.rows = null;
  root.dataset.waiting = error ? "error" : "fetching";
  map.classList.add("ax-waiting");
  root.querySelector(".ax-box").hidden = true;
  root.querySelector(".ax-strip-mark").hidden = true;
  const text = error || `Fetching layer ${view.layer}, head ${view.head} from the server…`;
  const line = Object.assign(document.createElement("p"), { textContent: text });
  root.querySelector(".ax-cell").replaceChildren(line);
  if (error) return;
  const still = () => {
    const now = ctx.state.get();
    return now.layer === view.layer && now.head === view.head && !ctx.life.closed;
  };
  const asked = performance.now();
  ctx.heads.load(view.layer, view.head).then(
    () => {
      root.dataset.fetchMs = String(performance.now() - asked); // asked to arrived
      return still() && drawCross(ctx);
    },
    (err) => still() && waitFor(ctx, view, String(err?.message || err)),
  );
}

function drawTicks(holder, ticks, ctx, width) {
  holder.replaceChildren();
  for (const tick of ticks) {
    const span = document.createElement("span");
    span.textContent = tick.text;
    span.style.left = `${frameLeft(tick.at, ctx.shape.nFrames, width)}px`;
    holder.appendChild(span);
  }
}

// The picked cell's readout and its box on the map (the token's peak when no frame is picked);
// its moment outlined in the strip.
function showCell(ctx) {
  const { root, map, shape } = ctx;
  const view = ctx.state.get();
  const box = root.querySelector(".ax-cell");
  const { cell, lines } = crossReadout(
    ctx.tokens,
    ctx.first,
    view,
    ctx.weights.rows,
    shape.nFrames,
    ctx.pick.frame,
  );
  box.replaceChildren(
    ...lines.map((line) => Object.assign(document.createElement("p"), { textContent: line })),
  );
  box.dataset.cell = JSON.stringify(cell);
  const f = cell.frame - ctx.first;
  const mark = root.querySelector(".ax-box");
  const w = map.clientWidth / shape.nFrames;
  const h = map.clientHeight / shape.nTokens;
  const x = map.offsetLeft + map.clientLeft + frameLeft(f, shape.nFrames, map.clientWidth);
  mark.style.left = `${x - 2}px`;
  mark.style.top = `${map.offsetTop + map.clientTop + view.token * h}px`;
  mark.style.width = `${w + 4}px`;
  mark.style.height = `${h}px`;
  mark.hidden = false;
  markStrip(ctx, f, w);
}

// The cell under the pointer: {token, frame} (frame of the span), or null.
function crossCellAt(ctx, event) {
  const { map, shape } = ctx;
  const rect = map.getBoundingClientRect();
  const x = event.clientX - rect.left - map.clientLeft;
  const y = event.clientY - rect.top - map.clientTop;
  const frame = frameAt(x, shape.nFrames, map.clientWidth);
  const token = Math.floor((y / map.clientHeight) * shape.nTokens);
  if (token < 0 || frame < 0 || token >= shape.nTokens || !ctx.weights.rows) return null;
  return { token, frame };
}

function wireCrossPointer(ctx) {
  const { map, tip } = ctx;
  map.addEventListener("mousemove", (e) => {
    const at = crossCellAt(ctx, e);
    if (!at) {
      tip.hidden = true;
      return;
    }
    const value = ctx.weights.rows[at.token * ctx.shape.nFrames + at.frame];
    tip.textContent = crossTip(ctx.tokens, ctx.first, at.token, at.frame, value);
    tip.dataset.value = String(value);
    placeTip(tip, ctx.root, e);
  });
  map.addEventListener("mouseleave", () => {
    tip.hidden = true;
  });
  map.addEventListener("click", (e) => {
    const at = crossCellAt(ctx, e);
    if (!at) return;
    ctx.pick.frame = at.frame;
    ctx.pick.clicked = true;
    const changed = ctx.state.set({ token: at.token });
    ctx.pick.clicked = false;
    if (!changed.length) drawCross(ctx);
  });
  wireStripPointer(ctx);
}

function crossExportSpec(ctx) {
  const { rows, range } = ctx.weights;
  if (!rows) return null; // the head has not arrived
  const view = ctx.state.get();
  const { nTokens, nFrames } = ctx.shape;
  const frameNames = [...Array(nFrames).keys()].map((f) => secondsText(crossSeconds(ctx.first, f)));
  const panel = {
    title: `cross-attention, tokens × time`,
    values: rows,
    n: nFrames,
    rows: [...Array(nTokens).keys()],
    cols: [...Array(nFrames).keys()],
    rowNames: ctx.tokens,
    colNames: frameNames,
    transpose: false,
    range,
    scale: SCALES.weights,
    blank: ctx.blank,
    image: ctx.map.toDataURL("image/png"),
    canvas: ctx.map,
    bar: ctx.root.querySelector(".ax-bar canvas"),
  };
  const title = `Whisper, layer ${view.layer}, head ${view.head}`;
  return { title, tokens: ctx.tokens, panels: [panel] };
}

function wireCrossControls(ctx) {
  const { root, state } = ctx;
  for (const name of ["layer", "head"]) {
    const select = root.querySelector(`[data-name="${name}"]`);
    const count = name === "layer" ? ctx.shape.nLayers : ctx.shape.nHeads;
    for (let i = 0; i < count; i++) select.add(new Option(String(i), String(i)));
    select.addEventListener("change", () => state.set({ [name]: Number(select.value) }));
  }
  root.querySelector(".ax-controls").addEventListener("click", (e) => {
    const step = e.target.closest && e.target.closest("[data-by]");
    if (step)
      state.set({
        [step.dataset.field]: state.get()[step.dataset.field] + Number(step.dataset.by),
      });
    const kind = e.target.closest && e.target.closest("[data-export]")?.dataset.export;
    const spec = kind && crossExportSpec(ctx);
    if (spec) save(spec, kind, fileName("whisper-cross", state.get(), kind), root.ownerDocument);
  });
}

// What is fixed for a cross view of `data` under `root`: the heads' source, the sentence, the
// markup, the theme's blank colour and the sound (crossstrip.js).
function crossContext(root, data, shape) {
  const named = new Set(data.named.map((p) => p.join(",")));
  const fixed = { root, shape, heads: crossHeads(data, shape), tokens: data.tokens, named };
  Object.assign(fixed, { first: data.first, sound: setUpStrip(root, shape, data) });
  Object.assign(fixed, { map: root.querySelector(".ax-map"), tip: root.querySelector(".ax-tip") });
  fixed.blank = themeRgb(root, "--st-background-color", "#ffffff");
  return fixed;
}

// Draw the cross-attention `data` (cross_data's: inline, the heads sent with it as [layer,
// head, base64 float32 [token, frame]]; store and api, where the others are fetched; tokens,
// first (the span's first frame in the clip), n_layers, n_heads, named ([layer, head] pairs
// the model names as aligning), caption; optional mel, base64 float32 [bin, frame], n_bins)
// into `parent`. `state` holds {layer, head, token} (state.js); `onDrawn(view)` runs after
// every drawing. Returns the cleanup.
export function renderCross(parent, data, state, onDrawn) {
  const holder = holderIn(parent);
  holder.innerHTML = CROSS_SKELETON; // fixed markup; tokens only ever go in as textContent
  const root = holder.querySelector(".ax");
  const shape = {
    nLayers: data.n_layers,
    nHeads: data.n_heads,
    nTokens: data.tokens.length,
    nFrames: data.n_frames,
  };
  const ctx = Object.freeze({
    ...crossContext(root, data, shape),
    state,
    onDrawn,
    weights: { rows: null, range: null }, // the head drawn: its weights, their colour range
    pick: { frame: -1, clicked: false }, // the picked frame (-1: the token's peak)
    life: { switched: false, closed: false }, // a head was switched to; the view is gone
  });
  root.querySelector(".ax-caption").textContent = data.caption || "";
  paintColourBar(root.querySelector(".ax-bar canvas"), SCALES.weights);
  wireCrossControls(ctx);
  wireCrossPointer(ctx);
  const unkey = wireKeys(ctx, () => true, true);
  const unsubscribe = state.subscribe((view, changed) => {
    if (changed.includes("token") && !ctx.pick.clicked) ctx.pick.frame = -1; // the page's pick
    if (changed.includes("layer") || changed.includes("head")) ctx.life.switched = true;
    drawCross(ctx);
  });
  drawCross(ctx);
  return () => {
    ctx.life.closed = true;
    unsubscribe();
    unkey();
  };
}
