// The panels of one view: each stage's heatmap, its colour bar, token labels, caption and the
// outline of the picked cell, laid out (labels.js) so that every token label is readable when
// it can be; the hint above them, and the note saying how many labels were left out if any.
// What it painted is its own (ctx.painted, from paintedState()): the one part of the view's
// context this module writes. One panel's heatmap with its colour bar and row labels
// (paintPanel) and its picked cell's outline (placePick) are drawn the same way for the
// cross-attention view (cross.js), whose columns are frames of the audio.

import { colourRange, labelAxis, paint, paintSame, scaleOf, themeRgb } from "./draw.js";
import { labelNote, panelLayout } from "./labels.js";
import { visibleTokens } from "./stages.js";
import { captions, fmt, hint, STAGE_TITLES } from "./words.js";

// What the panels last painted: the shown token ids (`shown`: {keep, rows, cols}, displayed
// rows and columns, keys × queries when transposed), each stage's colour range (`ranges`) and
// the theme's colour for hidden cells (`blank`); nothing until the first drawing.
export function paintedState() {
  return { shown: null, ranges: null, blank: null };
}

// The shown token ids: `keep` (all visible), and the rows and columns in the zoom window
// (queries × keys), or all of them when there is no window or it no longer fits (the state
// then drops it).
export function shownTokens(state, header) {
  const view = state.get();
  const keep = visibleTokens(header, view.hide_special);
  const w = state.fitZoom(keep.length);
  if (!w) return { keep, rows: keep, cols: keep };
  return { keep, rows: keep.slice(w.r0, w.r1), cols: keep.slice(w.c0, w.c1) };
}

// Two panels to a row or one, and a heatmap's side, for the view's width and shown tokens.
function layoutPanels(ctx) {
  const width = ctx.live.width || ctx.root.getBoundingClientRect().width || 900;
  const count = Math.max(ctx.painted.shown.rows.length, ctx.painted.shown.cols.length);
  const { across, size } = panelLayout(width, ctx.stages.length, count);
  const columns = across > 1 ? "repeat(2, minmax(0, 1fr))" : "minmax(0, 1fr)";
  const grid = ctx.root.querySelector(".ax-grid");
  if (grid.style.gridTemplateColumns !== columns) grid.style.gridTemplateColumns = columns;
  return size;
}

const CORNERS = new WeakMap(); // map -> {key, left, top}: where it sits in its plot

// The heatmap's inner top-left corner in its plot, read from the layout once per size (the
// plot's columns are fixed in explorer.css): reading it after this draw's writes would make
// the browser lay the page out in the middle of a switch. Not kept while the view is hidden.
function mapCorner(map, width, height) {
  const key = `${width}x${height}`;
  const kept = CORNERS.get(map);
  if (kept && kept.key === key) return kept;
  const at = { key, left: map.offsetLeft + map.clientLeft, top: map.offsetTop + map.clientTop };
  if (at.left > 0) CORNERS.set(map, at);
  return at;
}

// Outline cell (r, c) of a panel's heatmap, nRows × nCols cells drawn width × height px (at
// least 3 px each way, so a thin cell still shows). Returns the outline's {left, width} in the
// plot (a strip over the same columns marks the same x: crossstrip.js).
export function placePick(fig, r, c, shape) {
  const { nRows, nCols, width, height } = shape;
  const mark = fig.querySelector(".ax-pick");
  const h = height / nRows;
  const w = width / nCols;
  const at = mapCorner(fig.querySelector(".ax-map"), width, height);
  const box = { left: at.left + c * w, width: Math.max(w, 3) };
  Object.assign(mark.style, {
    left: `${box.left}px`,
    top: `${at.top + r * h}px`,
    width: `${box.width}px`,
    height: `${Math.max(h, 3)}px`,
  });
  mark.hidden = false;
  return box;
}

// Outline the picked cell (the one the arithmetic below spells out) in a panel.
function markPick(ctx, fig, size) {
  const view = ctx.state.get();
  const [row, col] = view.transpose ? [view.k, view.q] : [view.q, view.k];
  const { rows, cols } = ctx.painted.shown;
  const r = rows.indexOf(row);
  const c = cols.indexOf(col);
  if (ctx.inline || r < 0 || c < 0) fig.querySelector(".ax-pick").hidden = true;
  else placePick(fig, r, c, { nRows: rows.length, nCols: cols.length, width: size, height: size });
}

// Paint one panel's heatmap, `p.width` × `p.height` px: `p.values` (`p.stride` a row) over the
// ids `p.rows` × `p.cols` (transposed: the values' columns down the rows) in `p.range` on
// `p.scale`, hidden cells `p.blank`, or the pixels of the canvas `p.same`; the colour bar's ends
// and the row labels (`p.names` by id). Returns the row labels' fit (labelAxis). The explorer's
// stages are painted with it, and the cross-attention view (cross.js).
export function paintPanel(fig, p) {
  const map = fig.querySelector(".ax-map");
  if (map.style.width !== `${p.width}px`) map.style.width = `${p.width}px`;
  if (map.style.height !== `${p.height}px`) map.style.height = `${p.height}px`;
  if (p.same) paintSame(map, p.same);
  else paint(map, p.values, p.stride, p.rows, p.cols, p.transpose, p.range, p.scale, p.blank);
  fig.querySelector(".ax-bar .ax-hi").textContent = fmt(p.range[1], 2);
  fig.querySelector(".ax-bar .ax-lo").textContent = fmt(p.range[0], 2);
  const rows = fig.querySelector(".ax-rows");
  const fit = labelAxis(rows, p.rows, p.names, p.height, true);
  rows.style.height = `${p.height}px`;
  fig.querySelector(".ax-bar").style.height = `${p.height}px`;
  return fit;
}

// `same`: the canvas already painted with this stage's very values and range, or null.
function drawPanel(ctx, fig, stage, range, size, same) {
  const { rows, cols } = ctx.painted.shown;
  const { blank } = ctx.painted;
  const transpose = ctx.state.get().transpose;
  const values = ctx.computed.values[stage];
  const rowFit = paintPanel(fig, {
    ...{ values, stride: ctx.n, rows, cols, transpose, range, scale: scaleOf(stage), blank },
    ...{ same, names: ctx.tokens, width: size, height: size },
  });
  fig.querySelector(".ax-stage").textContent = STAGE_TITLES[stage];
  const colFit = labelAxis(fig.querySelector(".ax-cols"), cols, ctx.tokens, size, false);
  fig.querySelector(".ax-cols").style.width = `${size}px`;
  markPick(ctx, fig, size);
  return { rows: rowFit, cols: colFit };
}

// Say how many labels were left out (the same in every panel), or nothing.
function noteLabels(root, fits) {
  const note = root.querySelector(".ax-labels");
  note.textContent = labelNote(fits.rows, fits.cols);
  note.hidden = !note.textContent;
  note.dataset.hidden = JSON.stringify([fits.rows.hidden, fits.cols.hidden]);
}

// With no mask the masked stage is the scaled one, entry for entry (stages.computeStages): its
// panel takes the scaled panel's range and pixels instead of a second pass over n² cells.
// Returns the scaled panel's canvas then, else null.
function unmaskedScaled(ctx, view, stage) {
  const at = ctx.stages.indexOf("scaled");
  if (stage !== "masked" || view.causal || at < 0 || !ctx.painted.ranges.scaled) return null;
  return ctx.panels[at].querySelector(".ax-map");
}

// Draw every panel from ctx.computed.values (the computed stages); sets what it painted
// (ctx.painted): the shown tokens and each stage's colour range.
export function drawPanels(ctx) {
  const view = ctx.state.get();
  const painted = ctx.painted;
  const { keep, rows, cols } = shownTokens(ctx.state, ctx.header);
  painted.shown = view.transpose ? { keep, rows: cols, cols: rows } : { keep, rows, cols };
  const size = layoutPanels(ctx);
  painted.blank ||= themeRgb(ctx.root, "--st-secondary-background-color", "#f0f2f6");
  painted.ranges = {};
  let fits = null;
  for (const [i, stage] of ctx.stages.entries()) {
    const same = unmaskedScaled(ctx, view, stage);
    const range = same
      ? painted.ranges.scaled
      : colourRange(stage, ctx.computed.values[stage], ctx.n, rows, cols);
    painted.ranges[stage] = range;
    fits = drawPanel(ctx, ctx.panels[i], stage, range, size, same);
  }
  noteLabels(ctx.root, fits);
  const text = captions(ctx.header, view, painted.ranges);
  for (const [i, stage] of ctx.stages.entries()) {
    ctx.panels[i].querySelector(".ax-caption").textContent = text[stage];
  }
  ctx.root.querySelector(".ax-hint").textContent = hint({
    view,
    rows,
    cols,
    zoomed: !!ctx.state.zoom(),
    keys: ctx.allowed("head") && ctx.allowed("layer"),
    clickable: !ctx.inline,
  });
}
