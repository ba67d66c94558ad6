// The pointer and the keyboard on the explorer's heatmaps: hover for a cell's value, click for
// its arithmetic, drag or wheel to zoom, double-click to see all, ← → for the head and ↑ ↓ for
// the layer. `ctx` is the view's context (view.js): its state, what panels.js painted
// (ctx.painted.shown), the computed stages (ctx.computed.values), redraw(). Reads only: the zoom
// changes through the state's own zoomTo() and unzoom(). The cross-attention view (cross.js)
// takes the cell under the pointer, the tooltip's place and the keys from here too.

import { slotAt } from "./labels.js";
import { tipText } from "./words.js";

export function isTyping(event) {
  const el = event.composedPath()[0];
  if (!(el instanceof Element)) return false;
  const role = el.getAttribute("role") || "";
  return (
    /^(INPUT|TEXTAREA|SELECT|BUTTON)$/.test(el.tagName) ||
    el.isContentEditable ||
    /slider|textbox|combobox|listbox|option|spinbutton|button|menu|tab/.test(role)
  );
}

// The cell of a heatmap `map` (nRows × nCols cells) under the pointer: {r, c}, or null outside.
export function cellUnder(map, event, nRows, nCols) {
  const rect = map.getBoundingClientRect();
  // The image fills the content box, inside the canvas's 1 px border; its size from the
  // rectangle, not clientWidth, which rounds a fractional size (a long sentence's cells are
  // under a pixel: the rounding would move the pointer by a cell).
  const width = rect.width - 2 * map.clientLeft;
  const height = rect.height - 2 * map.clientTop;
  const c = slotAt(event.clientX - rect.left - map.clientLeft, nCols, width);
  const r = slotAt(event.clientY - rect.top - map.clientTop, nRows, height);
  return r < 0 || c < 0 ? null : { r, c };
}

// The cell under the pointer: shown row/column r, c and the query and key it stands for.
function cellAt(ctx, event) {
  const { rows, cols } = ctx.painted.shown;
  const at = cellUnder(event.currentTarget, event, rows.length, cols.length);
  if (!at) return null;
  const { r, c } = at;
  const [query, key] = ctx.state.get().transpose ? [cols[c], rows[r]] : [rows[r], cols[c]];
  return { r, c, query, key };
}

// Place a tooltip (or any floating box) next to the pointer, inside `root`.
export function placeTip(tip, root, event) {
  const box = root.getBoundingClientRect();
  tip.style.left = `${event.clientX - box.left + 14}px`;
  tip.style.top = `${event.clientY - box.top + 14}px`;
  tip.hidden = false;
}

function showTip(ctx, event, stage) {
  const tip = ctx.root.querySelector(".ax-tip");
  const cell = ctx.painted.shown && cellAt(ctx, event);
  if (!cell || !ctx.computed.values) {
    tip.hidden = true;
    return;
  }
  const value = ctx.computed.values[stage][cell.query * ctx.n + cell.key];
  const layer = ctx.state.get().layer;
  tip.textContent = tipText(stage, ctx.tokens, cell.query, cell.key, value, layer);
  tip.dataset.value = String(value);
  placeTip(tip, ctx.root, event);
}

// Zoom to positions [r0, r1) × [c0, c1) among the shown tokens (queries × keys).
function zoomTo(ctx, r0, r1, c0, c1) {
  ctx.state.zoomTo({ r0, r1, c0, c1 }, ctx.painted.shown.keep.length);
  ctx.redraw();
}

// Shown rows/cols are token ids; the zoom window counts positions in the visible list.
function position(ctx, list, index) {
  return ctx.painted.shown.keep.indexOf(list[index]);
}

// Zoom a window on screen (rows × cols positions); transposed, rows are keys.
function zoomShown(ctx, [r0, r1], [c0, c1]) {
  if (ctx.state.get().transpose) zoomTo(ctx, c0, c1, r0, r1);
  else zoomTo(ctx, r0, r1, c0, c1);
}

function onWheel(ctx, event) {
  const { shown } = ctx.painted;
  if (!shown) return;
  event.preventDefault();
  const cell = cellAt(ctx, event);
  if (!cell) return;
  const factor = event.deltaY < 0 ? 0.7 : 1 / 0.7;
  const span = (list, at) => {
    const lo = position(ctx, list, 0);
    const hi = position(ctx, list, list.length - 1) + 1;
    const mid = position(ctx, list, at);
    const size = Math.max(4, Math.round((hi - lo) * factor));
    const start = Math.round(mid - ((mid - lo) / (hi - lo)) * size);
    return [start, start + size];
  };
  zoomShown(ctx, span(shown.rows, cell.r), span(shown.cols, cell.c));
}

// A press on a heatmap: a rubber band follows the pointer; on release, under 4 px of travel is a
// click (`click()`), more a drag (`drop(end)`, `end` the release point held inside the heatmap,
// shaped as the event cellAt reads). The map view's pointer (mappointer.js) presses the same way.
export function dragBox(event, fig, click, drop) {
  const map = event.currentTarget;
  const box = fig.querySelector(".ax-box");
  const rect = map.getBoundingClientRect();
  const [x0, y0] = [event.clientX, event.clientY];
  const move = (e) => {
    box.hidden = false;
    Object.assign(box.style, {
      left: `${map.offsetLeft + Math.min(x0, e.clientX) - rect.left}px`,
      top: `${map.offsetTop + Math.min(y0, e.clientY) - rect.top}px`,
      width: `${Math.abs(e.clientX - x0)}px`,
      height: `${Math.abs(e.clientY - y0)}px`,
    });
  };
  const up = (e) => {
    window.removeEventListener("mousemove", move);
    window.removeEventListener("mouseup", up);
    box.hidden = true;
    if (Math.abs(e.clientX - x0) + Math.abs(e.clientY - y0) < 4) {
      click();
      return;
    }
    const inside = (v, lo, hi) => Math.min(Math.max(v, lo), hi - 1);
    const clientX = inside(e.clientX, rect.left, rect.right);
    drop({ currentTarget: map, clientX, clientY: inside(e.clientY, rect.top, rect.bottom) });
  };
  window.addEventListener("mousemove", move);
  window.addEventListener("mouseup", up);
}

// A press: a click (no move) picks the cell for its arithmetic; a drag zooms to its rectangle.
function onDrag(ctx, event, fig) {
  const start = cellAt(ctx, event);
  if (!start) return;
  const pick = () => ctx.state.set({ q: start.query, k: start.key });
  dragBox(event, fig, pick, (at) => {
    const end = cellAt(ctx, at);
    if (!end) return;
    const order = (list, a, b) =>
      [position(ctx, list, a), position(ctx, list, b)].sort((x, y) => x - y);
    const rs = order(ctx.painted.shown.rows, start.r, end.r);
    const cs = order(ctx.painted.shown.cols, start.c, end.c);
    zoomShown(ctx, [rs[0], rs[1] + 1], [cs[0], cs[1] + 1]);
  });
}

// Hover, press, wheel and double-click on every panel's heatmap.
export function wirePointer(ctx) {
  for (const [i, fig] of ctx.panels.entries()) {
    const map = fig.querySelector(".ax-map");
    map.addEventListener("mousemove", (e) => showTip(ctx, e, ctx.stages[i]));
    map.addEventListener("mouseleave", () => {
      ctx.root.querySelector(".ax-tip").hidden = true;
    });
    map.addEventListener("mousedown", (e) => {
      e.preventDefault();
      ctx.root.focus({ preventScroll: true }); // a scroll would move the cell under the pointer
      onDrag(ctx, e, fig);
    });
    map.addEventListener("wheel", (e) => onWheel(ctx, e), { passive: false });
    map.addEventListener("dblclick", () => {
      ctx.state.unzoom();
      ctx.redraw();
    });
  }
}

// ↑ ↓ (on the focused view) step the layer; ← → the head, anywhere on the page but in a text
// field when `pageWide` (the app), else on the focused view too (a notebook keeps its arrows).
// Returns the cleanup (the page-wide listener).
export function wireKeys(ctx, allowed, pageWide) {
  const { root, state } = ctx;
  root.addEventListener("keydown", (e) => {
    if ((e.key !== "ArrowUp" && e.key !== "ArrowDown") || isTyping(e) || !allowed("layer")) return;
    e.preventDefault();
    state.set({ layer: state.get().layer + (e.key === "ArrowUp" ? -1 : 1) });
  });
  const onKey = (e) => {
    if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
    if (isTyping(e) || e.altKey || e.ctrlKey || e.metaKey || !allowed("head")) return;
    e.preventDefault();
    state.set({ head: state.get().head + (e.key === "ArrowLeft" ? -1 : 1) });
  };
  const page = pageWide ? root.ownerDocument : root;
  page.addEventListener("keydown", onKey);
  return () => page.removeEventListener("keydown", onKey);
}
