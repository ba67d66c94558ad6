// The explorer in map mode (a sentence longer than header.map.from tokens; map.js has the
// geometry): each panel is one head's stage computed on the server under the view's switches
// (the browser cannot renormalise a pooled row, so a switch asks again; shorter sentences keep
// the browser-side recomputation, stages.js), drawn whole and pooled, or a window of it from
// full-resolution tiles once a zoom reaches single tokens. After drawing it asks for what the
// next move needs: the tiles around the window and the same window of the neighbouring heads.
// What it drew is its own (ctx.mapped, from mappedState()): the one part of the view's context
// this module writes. The view's zoom and pooling change only through the state (state.js).

import { colourRange, labelAxis, scaleOf, themeRgb } from "./draw.js";
import { labelNote, panelLayout } from "./labels.js";
import * as geo from "./map.js";
import { paintPanel } from "./panels.js";
import { cellUnder } from "./pointer.js";
import { blockText, fmt, mapCaption, STAGE_TITLES, tipText } from "./words.js";

export function mappedState() {
  return { shown: null, last: null, blank: null, asked: new Set(), provisional: 0 };
}

// The fields of one request for `stage` (the rollout averages every head: asked as head 0).
function fields(part, view, stage, window) {
  const asked = stage === "rollout" ? { ...view, head: 0 } : view;
  return geo.headFields(part, asked, stage, window);
}

// A block of the source: the array, {error}, or undefined (then asked, redrawn on arrival).
function want(ctx, request) {
  const got = ctx.source.peekHead(request);
  if (got) return got;
  const key = JSON.stringify(request);
  if (!ctx.mapped.asked.has(key)) {
    ctx.mapped.asked.add(key);
    const done = () => {
      ctx.mapped.asked.delete(key);
      ctx.redraw();
    };
    ctx.source.head(request).then(done, done);
  }
  return undefined;
}

// One stage's values over window `w`: {values, rows, cols, pooled?} or {error} or undefined.
function stageGrid(ctx, view, stage, w, block) {
  if (stage === "rollout") return rolloutGrid(ctx, view, w, block);
  if (block > 1) {
    const got = want(ctx, fields("map", view, stage, w));
    if (!got || got.error) return got;
    const { rows, cols } = geo.pooledShape(w, block);
    const values = geo.plane(got, rows, cols, ctx.state.pooling());
    return { values, rows, cols, pooled: got };
  }
  const tiles = geo.tilesOver(w, ctx.header.map.tile, ctx.n);
  const arrays = tiles.map((t) => want(ctx, fields("tile", view, stage, t.window)));
  const failed = arrays.find((a) => a?.error);
  if (failed) return failed;
  if (arrays.some((a) => !a)) return undefined;
  return { values: geo.assemble(w, tiles, arrays), rows: w.r1 - w.r0, cols: w.c1 - w.c0 };
}

// A long text's rollout is held by the engine as block means over the whole text
// (rollout.trace_rollout_pooled): asked for whole, and a zoom shows those cells stretched.
function rolloutGrid(ctx, view, w, block) {
  const whole = geo.wholeWindow(ctx.n);
  const wholeBlock = geo.blockOf(whole, ctx.header.map.side);
  const got = want(ctx, fields("map", view, "rollout", whole));
  if (!got || got.error) return got;
  const { rows, cols } = geo.pooledShape(whole, wholeBlock);
  const held = { values: geo.plane(got, rows, cols, "mean"), rows, cols, pooled: got };
  if (w.r0 === 0 && w.c0 === 0 && w.r1 === ctx.n && w.c1 === ctx.n) return held;
  const [grid] = stretch({ w: whole, block: wholeBlock, grids: [held] }, w, block);
  return { ...grid, held: { block: wholeBlock, grid: held } };
}

function windowOf(ctx) {
  const z = ctx.state.fitZoom(ctx.n);
  return z ? { ...z } : geo.wholeWindow(ctx.n);
}

// Each axis's labels: the token of each cell (a pooled cell: its block's first token).
function names(ctx, first, count, block) {
  return geo.positions(first, count, block).map((t) => ctx.tokens[t]);
}

function paintStage(ctx, fig, stage, grid, shape) {
  const { size, transpose, w, block } = shape;
  const rowIds = geo.positions(0, grid.rows);
  const colIds = geo.positions(0, grid.cols);
  // A pooled share (a block's mean weight is near 1/n) is coloured 0..its largest, not 0..1.
  const shares = block > 1 && (stage === "pattern" || stage === "rollout");
  const range = colourRange(shares ? "weighted" : stage, grid.values, grid.cols, rowIds, colIds);
  const queries = names(ctx, w.r0, grid.rows, block);
  const keys = names(ctx, w.c0, grid.cols, block);
  const [rows, cols, rowNames, colNames] = transpose
    ? [colIds, rowIds, keys, queries]
    : [rowIds, colIds, queries, keys];
  const rowFit = paintPanel(fig, {
    ...{ values: grid.values, stride: grid.cols, rows, cols, transpose, range },
    ...{ scale: scaleOf(stage), blank: ctx.mapped.blank, names: rowNames, width: size },
    height: size,
  });
  fig.querySelector(".ax-stage").textContent = STAGE_TITLES[stage];
  const holder = fig.querySelector(".ax-cols");
  const colFit = labelAxis(holder, cols, colNames, size, false);
  holder.style.width = `${size}px`;
  const pooling = stage === "rollout" ? "mean" : ctx.state.pooling(); // held as means only
  const caption = mapCaption(grid.held ? grid.held.block : block, pooling, grid.rows, grid.cols);
  fig.querySelector(".ax-caption").textContent = caption;
  fig.querySelector(".ax-pick").hidden = true;
  return { rows: rowFit, cols: colFit };
}

function layout(ctx, count) {
  const width = ctx.live.width || ctx.root.getBoundingClientRect().width || 900;
  const { across, size } = panelLayout(width, ctx.stages.length, count);
  const columns = across > 1 ? "repeat(2, minmax(0, 1fr))" : "minmax(0, 1fr)";
  const grid = ctx.root.querySelector(".ax-grid");
  if (grid.style.gridTemplateColumns !== columns) grid.style.gridTemplateColumns = columns;
  return size;
}

// Draw every panel of the view's head over its window; false while a block is missing (asked
// for: the view is drawn again when it comes) or failed (said in the status line).
export function drawMap(ctx) {
  const view = ctx.state.get();
  const w = windowOf(ctx);
  const block = geo.blockOf(w, ctx.header.map.side);
  const grids = ctx.stages.map((stage) => stageGrid(ctx, view, stage, w, block));
  const failed = grids.find((g) => g?.error);
  const status = ctx.root.querySelector(".ax-status");
  status.textContent = failed
    ? `Could not load layer ${view.layer}, head ${view.head}: ${failed.error}`
    : grids.some((g) => !g)
      ? `loading layer ${view.layer}, head ${view.head}…`
      : "";
  const same = sameHead(view, ctx.stages, ctx.state.pooling());
  if (failed || grids.some((g) => !g)) {
    // A zoom whose numbers are on their way: the window drawn at once from the cells already
    // here (coarser), the sharp one when they come.
    const last = ctx.mapped.last;
    if (!failed && last?.same === same) {
      paintAll(ctx, view, w, block, stretch(last, w, block));
      ctx.mapped.shown = null; // no read-out of borrowed cells
      ctx.root.dataset.provisional = String(++ctx.mapped.provisional);
    }
    return false;
  }
  paintAll(ctx, view, w, block, grids);
  ctx.mapped.shown = { w, block, grids, transpose: view.transpose };
  ctx.mapped.last = { same, w, block, grids };
  drawMapCell(ctx);
  setTimeout(() => prefetch(ctx, view, w, block), 0); // after this frame is on screen
  return true;
}

function sameHead(view, stages, pooling) {
  return JSON.stringify([view.layer, view.head, geo.settingsOf(view), stages, pooling]);
}

function paintAll(ctx, view, w, block, grids) {
  ctx.mapped.blank ||= themeRgb(ctx.root, "--st-secondary-background-color", "#f0f2f6");
  const size = layout(ctx, Math.max(grids[0].rows, grids[0].cols));
  const shape = { size, transpose: view.transpose, w, block };
  let fits = null;
  for (const [i, stage] of ctx.stages.entries()) {
    fits = paintStage(ctx, ctx.panels[i], stage, grids[i], shape);
  }
  const note = ctx.root.querySelector(".ax-labels");
  note.textContent = labelNote(fits.rows, fits.cols);
  note.hidden = !note.textContent;
  ctx.root.querySelector(".ax-hint").textContent = mapHint(w, ctx.n, view.transpose);
}

// The grids of window `w` at `block` made from the last drawn ones: each cell takes the value
// of the drawn cell holding its first token (blank outside what was drawn).
function stretch(last, w, block) {
  const { rows, cols } = geo.pooledShape(w, block);
  const at = (first, lo, hi, step, count) =>
    geo
      .positions(first, count, block)
      .map((t) => (t >= lo && t < hi ? Math.floor((t - lo) / step) : -1));
  const rowAt = at(w.r0, last.w.r0, last.w.r1, last.block, rows);
  const colAt = at(w.c0, last.w.c0, last.w.c1, last.block, cols);
  return last.grids.map((g) => {
    const values = new Float32Array(rows * cols).fill(-Infinity);
    for (let r = 0; r < rows; r++) {
      if (rowAt[r] < 0) continue;
      for (let c = 0; c < cols; c++) {
        if (colAt[c] >= 0) values[r * cols + c] = g.values[rowAt[r] * g.cols + colAt[c]];
      }
    }
    return { values, rows, cols };
  });
}

function mapHint(w, n, transpose) {
  const whole = w.r0 === 0 && w.c0 === 0 && w.r1 === n && w.c1 === n;
  const where = whole
    ? `All ${n.toLocaleString("en")} tokens. `
    : `Showing tokens ${w.r0}–${w.r1 - 1} × ${w.c0}–${w.c1 - 1}; double-click to see all. `;
  return (
    `${where}${transpose ? "Columns are queries, rows are keys" : "Rows are queries, columns are keys"}. ` +
    "Hover a cell for its value, drag or scroll " +
    "to zoom in (single tokens and their labels appear when they fit); ← → change the head, " +
    "↑ ↓ the layer (after a click on the view)."
  );
}

// After drawing: the tiles around the window (or nothing more when pooled), and the same
// window of the neighbouring heads, so the next pan or head switch finds them here. A pooled
// window inside the text prefetches nothing: a wheel zoom passes through one after another,
// and their neighbours' maps (~80 ms each on the server at 2,048 tokens) would queue ahead of
// the window the visitor stops at.
function prefetch(ctx, view, w, block) {
  if (!ctx.live.alive) return;
  const quiet = (request) => ctx.source.head(request).catch(() => {});
  const heads = [view.head - 1, view.head + 1].filter((h) => h >= 0 && h < ctx.header.n_heads);
  const whole = w.r0 === 0 && w.c0 === 0 && w.r1 === ctx.n && w.c1 === ctx.n;
  for (const stage of ctx.stages.filter((name) => name !== "rollout")) {
    if (block > 1) {
      if (whole) for (const head of heads) quiet(fields("map", { ...view, head }, stage, w));
      continue;
    }
    const tile = ctx.header.map.tile;
    for (const t of geo.tilesAround(w, tile, ctx.n)) quiet(fields("tile", view, stage, t.window));
    for (const head of heads) {
      for (const t of geo.tilesOver(w, tile, ctx.n)) {
        quiet(fields("tile", { ...view, head }, stage, t.window));
      }
    }
  }
}

// The cell (local row and column of the window's grid) under the pointer and its tokens.
export function cellAt(ctx, map, event) {
  const shown = ctx.mapped.shown;
  const { rows, cols } = shown.grids[0];
  const [nRows, nCols] = shown.transpose ? [cols, rows] : [rows, cols];
  const at = cellUnder(map, event, nRows, nCols);
  if (!at) return null;
  const [row, col] = shown.transpose ? [at.c, at.r] : [at.r, at.c];
  return { row, col, tokens: geo.cellTokens(shown.w, shown.block, row, col) };
}

// What a cell of `stage` says: its block's mean and max, or the two tokens and the value.
export function cellSays(ctx, stage, i, { row, col, tokens }) {
  const { grids, block } = ctx.mapped.shown;
  const grid = grids[i];
  if (grid.held) {
    const { block: hb, grid: g } = grid.held;
    const [r, c] = [Math.floor(tokens.r0 / hb), Math.floor(tokens.c0 / hb)];
    const mean = g.pooled[r * g.cols + c];
    const held = geo.cellTokens(geo.wholeWindow(ctx.n), hb, r, c);
    return { text: blockText(held, mean, NaN), data: { mean, max: null } };
  }
  if (block > 1) {
    const size = grid.rows * grid.cols;
    const at = row * grid.cols + col;
    const [mean, max] = [grid.pooled[at], grid.pooled[size + at]];
    return { text: blockText(tokens, mean, max), data: { mean, max } };
  }
  const value = grid.values[row * grid.cols + col];
  const text = tipText(stage, ctx.tokens, tokens.r0, tokens.c0, value, ctx.state.get().layer);
  return { text, data: { value } };
}

// The read-out under the panels: the picked cell (view.q, view.k) as it is drawn now.
export function drawMapCell(ctx) {
  const box = ctx.root.querySelector(".ax-cell");
  const { q, k } = ctx.state.get();
  const shown = ctx.mapped.shown;
  delete box.dataset.cell;
  if (!shown || q == null || q < 0 || k < 0) {
    box.textContent = "Click a cell to read its number.";
    return;
  }
  const { w, block } = shown;
  if (q < w.r0 || q >= w.r1 || k < w.c0 || k >= w.c1) {
    box.textContent = "The picked cell is outside the part shown; double-click to see all.";
    return;
  }
  const row = Math.floor((q - w.r0) / block);
  const col = Math.floor((k - w.c0) / block);
  const cell = { row, col, tokens: geo.cellTokens(w, block, row, col) };
  const data = { query: q, key: k, block, tokens: cell.tokens };
  const lines = ctx.stages.map((stage, i) => {
    const says = cellSays(ctx, stage, i, cell);
    data[stage] = says.data;
    const exact = says.data.value === undefined ? "" : ` (exactly ${fmt(says.data.value)})`;
    return `${STAGE_TITLES[stage]}: ${says.text}${exact}`;
  });
  const items = lines.map((text) =>
    Object.assign(document.createElement("p"), { textContent: text }),
  );
  box.replaceChildren(...items);
  box.dataset.cell = JSON.stringify(data);
}
