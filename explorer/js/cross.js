// Cross-attention, tokens × time: one row per written token (the decoder writing it), one
// column per 20 ms of the audio over the speech span, for any decoder layer and head, under the
// sound itself (crossstrip.js, the one piece audio adds). The explorer's own parts draw it: the
// view's state (state.js: {layer, head, token, frame}, frame -1 for the token's own peak), the
// layer blocks of the text models' route and page cache (source.js: part "cross", [heads,
// tokens, frames], one layer holding every head, so a head switch draws at once), the markup
// and control bar (controls.js), the heatmap with its colour bar, row labels and picked cell
// (panels.js), the time axis (labels.js, draw.js), the pointer and keys (pointer.js: ← → the
// head anywhere on the page, ↑ ↓ the layer on the focused view), the words (words.js) and
// export (export.js). Hover a cell for its weight, the strip for the time; click a cell for the
// readout (its moment is outlined in the strip), and the page hears {layer, head, token}.
//
// Its context is frozen: what is fixed for the view (header, state, source, markup, redraw()),
// and the parts that change, each written by one module: ctx.live and ctx.computed here,
// ctx.sound in crossstrip.js. The view itself changes only through its owner, state.js.

import { buildView, syncControls, wireControls } from "./controls.js";
import { drawStrip, markStrip, setUpStrip, wireStripPointer } from "./crossstrip.js";
import { colourRange, holderIn, SCALES, themeRgb, tickAxis } from "./draw.js";
import { fileName, save } from "./export.js";
import { timeTicks } from "./labels.js";
import { paintPanel, placePick } from "./panels.js";
import { cellUnder, placeTip, wireKeys } from "./pointer.js";
import { askOnce, prefetchLayers } from "./source.js";
import { crossHead, rowPeak } from "./stages.js";
import {
  crossReadout,
  crossTip,
  crossTitle,
  frameSeconds,
  loadStatus,
  secondsText,
} from "./words.js";

const PART = "cross"; // the layer block a view draws from (pack.cross_block)
const CONTROLS = ["layer", "head"]; // of the explorer's control bar

// Ask for the layer's block; once it arrives (or fails) the view draws again, and the time from
// asking to arriving is on the root (data-fetch-ms).
function ask(ctx, layer) {
  const asked = performance.now();
  askOnce(ctx.source, ctx.live.asked, layer, PART, () => {
    ctx.root.dataset.fetchMs = String(performance.now() - asked);
    ctx.redraw();
  });
}

// The view's layer block if it has arrived, else null: asked for (unless it failed: a switch
// asks again), and the status line, the faded map and data-waiting say why it is not drawn.
function layerBlock(ctx, view) {
  const block = ctx.source.peek(view.layer, PART);
  const ready = !!block && !block.error;
  const { root } = ctx;
  root.querySelector(".ax-status").textContent = loadStatus(view.layer, !ready, block?.error);
  ctx.map.classList.toggle("ax-waiting", !ready);
  if (ready) {
    delete root.dataset.waiting;
    return block;
  }
  root.dataset.waiting = block ? "error" : "fetching";
  ctx.computed.rows = null; // nothing to hover or save until it comes
  ctx.fig.querySelector(".ax-pick").hidden = true;
  markStrip(ctx, null);
  if (!block) ask(ctx, view.layer);
  return null;
}

// Paint the head `rows` [token, frame] with its row labels, time ticks and the sound above;
// returns the matrix's shape on screen (placePick's).
function paintCross(ctx, rows) {
  const { header, ids } = ctx;
  const n = header.n_frames;
  const width = Math.max(320, Math.min(1200, (ctx.root.clientWidth || 760) - 150));
  const height = Math.min(560, Math.max(60, 18 * header.n_tokens));
  const range = colourRange(PART, rows, n, ids.tokens, ids.frames);
  paintPanel(ctx.fig, {
    ...{ values: rows, stride: n, rows: ids.tokens, cols: ids.frames, transpose: false },
    ...{ range, scale: SCALES.weights, blank: ctx.blank, names: header.tokens, width, height },
  });
  const cols = ctx.fig.querySelector(".ax-cols");
  cols.style.width = `${width}px`;
  tickAxis(cols, timeTicks(header.first, n, width), n, width);
  drawStrip(ctx, width);
  Object.assign(ctx.computed, { rows, range });
  return { nRows: header.n_tokens, nCols: n, width, height };
}

// The picked cell's readout (the token's peak when no frame is picked) and its outline on the
// map and, at the same x, in the strip.
function showCell(ctx, view, rows, shape) {
  const { tokens, first, n_frames: n } = ctx.header;
  const peak = rowPeak(rows, n, view.token);
  const { cell, lines } = crossReadout(tokens, first, view, rows, n, peak);
  const box = ctx.root.querySelector(".ax-cell");
  const paragraph = (text) => Object.assign(document.createElement("p"), { textContent: text });
  box.replaceChildren(...lines.map(paragraph));
  box.dataset.cell = JSON.stringify(cell);
  markStrip(ctx, placePick(ctx.fig, view.token, cell.frame - first, shape));
}

function draw(ctx) {
  if (!ctx.live.alive) return;
  const t0 = performance.now();
  const view = ctx.state.get();
  const { root } = ctx;
  root.querySelector(".ax-title").textContent = crossTitle(view, ctx.named); // before it comes
  syncControls(root, view);
  const block = layerBlock(ctx, view);
  if (!block) return;
  const rows = crossHead(block, ctx.header, view.head);
  showCell(ctx, view, rows, paintCross(ctx, rows));
  root.dataset.view = JSON.stringify({ layer: view.layer, head: view.head, token: view.token });
  root.dataset.drawMs = String(performance.now() - t0);
  root.dataset.drawn = String(ctx.state.countDrawn()); // benchmarks and tests wait on it
  ctx.onDrawn(view);
}

// Hover a cell for its weight; click it to pick it (the state's token and frame).
function wireCrossPointer(ctx) {
  const { map, tip, header } = ctx;
  const under = (e) => ctx.computed.rows && cellUnder(map, e, header.n_tokens, header.n_frames);
  map.addEventListener("mousemove", (e) => {
    const at = under(e);
    if (!at) {
      tip.hidden = true;
      return;
    }
    const value = ctx.computed.rows[at.r * header.n_frames + at.c];
    tip.textContent = crossTip(header.tokens, header.first, at.r, at.c, value);
    tip.dataset.value = String(value);
    placeTip(tip, ctx.root, e);
  });
  map.addEventListener("mouseleave", () => {
    tip.hidden = true;
  });
  map.addEventListener("click", (e) => {
    const at = under(e);
    if (at) ctx.state.set({ token: at.r, frame: at.c });
  });
  wireStripPointer(ctx);
}

// Save the head on screen: tokens down the rows, the seconds of each frame along the columns.
function exportCross(ctx, kind) {
  const { rows, range } = ctx.computed;
  if (!rows) return; // its layer has not arrived
  const view = ctx.state.get();
  const { header, ids, map } = ctx;
  const colNames = ids.frames.map((f) => secondsText(frameSeconds(header.first, f)));
  const panel = {
    ...{ title: "cross-attention, tokens × time", values: rows, n: header.n_frames, range },
    ...{ rows: ids.tokens, cols: ids.frames, rowNames: header.tokens, colNames },
    ...{ transpose: false, scale: SCALES.weights, blank: ctx.blank, canvas: map },
    ...{ image: map.toDataURL("image/png"), bar: ctx.fig.querySelector(".ax-bar canvas") },
  };
  const spec = { title: `Whisper, layer ${view.layer}, head ${view.head}`, panels: [panel] };
  spec.tokens = header.tokens;
  save(spec, kind, fileName("whisper-cross", view, kind), ctx.root.ownerDocument);
}

// The explorer's markup with the layer and head pickers alone, one panel a row wide, seconds
// along its columns.
function build(parent, header) {
  const built = buildView(holderIn(parent), header, { stages: [PART], controls: CONTROLS });
  const { root } = built;
  root.classList.add("ax-cross");
  root.setAttribute("aria-label", "Cross-attention, tokens × time");
  root.querySelector(".ax-hint").hidden = true; // the page's caption says how to read it
  root.querySelector(".ax-grid").style.gridTemplateColumns = "minmax(0, 1fr)";
  const fig = built.panels[0];
  fig.querySelector(".ax-cols").classList.add("ax-time");
  return { root, fig };
}

function context(parent, options) {
  const { header, state, source } = options;
  const { root, fig } = build(parent, header);
  const ctx = { header, state, source, root, fig, map: fig.querySelector(".ax-map") };
  ctx.tip = root.querySelector(".ax-tip");
  ctx.named = new Set((options.named || []).map((pair) => pair.join(",")));
  const count = (n) => [...Array(n).keys()];
  ctx.ids = { tokens: count(header.n_tokens), frames: count(header.n_frames) };
  ctx.blank = themeRgb(root, "--st-background-color", "#ffffff");
  ctx.sound = setUpStrip(fig, header, options.mel, options.nBins);
  ctx.onDrawn = options.onDrawn || (() => {});
  ctx.live = { alive: true, asked: new Set() }; // alive until the cleanup; the blocks asked for
  ctx.computed = { rows: null, range: null }; // the head drawn: its weights, their colour range
  ctx.redraw = () => draw(ctx);
  return Object.freeze(ctx);
}

// Draw a clip's cross-attention into `parent`. options: header (pack.cross_header's: tokens,
// n_layers, n_heads, n_tokens, n_frames, first: the span's first frame in the clip), state
// ({layer, head, token, frame}, state.js), source (clipSource's), named ([layer, head] pairs the
// model's makers list as aligning), caption, mel (Float32Array [nBins, n_frames], optional),
// nBins, onDrawn(view) after every drawing. Returns the cleanup.
export function renderCross(parent, options) {
  const ctx = context(parent, options);
  ctx.fig.querySelector(".ax-caption").textContent = options.caption || "";
  wireControls(ctx.root, ctx.state, (kind) => exportCross(ctx, kind));
  wireCrossPointer(ctx);
  const unkey = wireKeys(ctx, () => true, true);
  const unsubscribe = ctx.state.subscribe((view, changed) => {
    const switched = changed.includes("layer") || changed.includes("head");
    if (switched && ctx.source.peek(view.layer, PART)?.error) ask(ctx, view.layer); // again
    draw(ctx);
  });
  draw(ctx);
  prefetchLayers(ctx.source, ctx.header, ctx.state.get().layer, [PART]);
  return () => {
    ctx.live.alive = false;
    unsubscribe();
    unkey();
  };
}
