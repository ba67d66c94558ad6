// The panels of one view: each stage's heatmap, its colour bar, token labels, caption and the
// outline of the picked cell, laid out (labels.js) so that every token label is readable when
// it can be; the hint above them, and the note saying how many labels were left out if any.
// What it painted is its own (ctx.painted, from paintedState()): the one part of the view's
// context this module writes.

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

const CORNERS = new WeakMap(); // map -> {size, left, top}: where it sits in its plot

// The heatmap's inner top-left corner in its plot, read from the layout once per size (the
// plot's columns are fixed in explorer.css): reading it after this draw's writes would make
// the browser lay the page out in the middle of a switch. Not kept while the view is hidden.
function mapCorner(map, size) {
  const kept = CORNERS.get(map);
  if (kept && kept.size === size) return kept;
  const at = { size, left: map.offsetLeft + map.clientLeft, top: map.offsetTop + map.clientTop };
  if (at.left > 0) CORNERS.set(map, at);
  return at;
}

// Outline the picked cell (the one the arithmetic below spells out) in a panel.
function markPick(ctx, fig, size) {
  const view = ctx.state.get();
  const map = fig.querySelector(".ax-map");
  const mark = fig.querySelector(".ax-pick");
  const [row, col] = view.transpose ? [view.k, view.q] : [view.q, view.k];
  const { rows, cols } = ctx.painted.shown;
  const r = rows.indexOf(row);
  const c = cols.indexOf(col);
  mark.hidden = !!ctx.inline || r < 0 || c < 0;
  if (mark.hidden) return;
  const h = size / rows.length;
  const w = size / cols.length;
  const at = mapCorner(map, size);
  Object.assign(mark.style, {
    left: `${at.left + c * w}px`,
    top: `${at.top + r * h}px`,
    width: `${Math.max(w, 3)}px`,
    height: `${Math.max(h, 3)}px`,
  });
}

// `same`: the canvas already painted with this stage's very values and range, or null.
function drawPanel(ctx, fig, stage, range, size, same) {
  const { rows, cols } = ctx.painted.shown;
  const map = fig.querySelector(".ax-map");
  const side = `${size}px`;
  if (map.style.width !== side) map.style.width = map.style.height = side;
  const transpose = ctx.state.get().transpose;
  if (same) paintSame(map, same);
  else {
    const { blank } = ctx.painted;
    paint(
      map,
      ctx.computed.values[stage],
      ctx.n,
      rows,
      cols,
      transpose,
      range,
      scaleOf(stage),
      blank,
    );
  }
  fig.querySelector(".ax-stage").textContent = STAGE_TITLES[stage];
  fig.querySelector(".ax-hi").textContent = fmt(range[1], 2);
  fig.querySelector(".ax-lo").textContent = fmt(range[0], 2);
  const rowFit = labelAxis(fig.querySelector(".ax-rows"), rows, ctx.tokens, size, true);
  const colFit = labelAxis(fig.querySelector(".ax-cols"), cols, ctx.tokens, size, false);
  fig.querySelector(".ax-rows").style.height = `${size}px`;
  fig.querySelector(".ax-bar").style.height = `${size}px`;
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
