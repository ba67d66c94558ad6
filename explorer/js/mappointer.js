// The pointer on the explorer's heatmaps in map mode (mapview.js draws them): hover for a
// cell's value (a pooled cell: its block's mean and max), click to pick it for the read-out,
// drag or wheel to zoom to the tokens it spans, double-click to see all; and the pooling picker
// (mean or max). Reads only: the zoom and the pooling change through the state (state.js).

import { cellAt, cellSays } from "./mapview.js";
import { dragBox, placeTip } from "./pointer.js";

function showTip(ctx, event, i) {
  const tip = ctx.root.querySelector(".ax-tip");
  const cell = ctx.mapped.shown && cellAt(ctx, event.currentTarget, event);
  if (!cell) {
    tip.hidden = true;
    return;
  }
  const says = cellSays(ctx, ctx.stages[i], i, cell);
  tip.textContent = says.text;
  tip.dataset.value = JSON.stringify(says.data);
  placeTip(tip, ctx.root, event);
}

function zoomTokens(ctx, r0, r1, c0, c1) {
  ctx.state.zoomTo({ r0, r1, c0, c1 }, ctx.n);
  ctx.redraw();
}

function onWheel(ctx, event) {
  event.preventDefault();
  const cell = ctx.mapped.shown && cellAt(ctx, event.currentTarget, event);
  if (!cell) return;
  const { w } = ctx.mapped.shown;
  const factor = event.deltaY < 0 ? 0.5 : 2;
  const span = (lo, hi, at) => {
    const size = Math.max(8, Math.round((hi - lo) * factor));
    const start = Math.round(at - ((at - lo) / (hi - lo)) * size);
    return [start, start + size];
  };
  const [r0, r1] = span(w.r0, w.r1, cell.tokens.r0);
  const [c0, c1] = span(w.c0, w.c1, cell.tokens.c0);
  zoomTokens(ctx, r0, r1, c0, c1);
}

// A press: a click picks the cell; a drag zooms to the tokens of the cells it spans.
function onPress(ctx, event, fig) {
  const map = event.currentTarget;
  const start = ctx.mapped.shown && cellAt(ctx, map, event);
  if (!start) return;
  const pick = () => ctx.state.set({ q: start.tokens.r0, k: start.tokens.c0 });
  dragBox(event, fig, pick, (at) => {
    const end = cellAt(ctx, map, at);
    if (!end) return;
    const [a, b] = [start.tokens, end.tokens];
    const r = [Math.min(a.r0, b.r0), Math.max(a.r1, b.r1)];
    const c = [Math.min(a.c0, b.c0), Math.max(a.c1, b.c1)];
    zoomTokens(ctx, r[0], r[1], c[0], c[1]);
  });
}

// The pooling picker (mean or max) in the control bar, and the pointer on every heatmap.
export function wireMap(ctx) {
  const label = document.createElement("label");
  label.className = "ax-pool";
  label.title = "What a cell shows of its block of tokens when the map is pooled.";
  const select = document.createElement("select");
  select.dataset.pool = "";
  for (const name of ["mean", "max"]) select.add(new Option(name, name));
  select.value = ctx.state.pooling();
  select.addEventListener("change", () => {
    ctx.state.setPooling(select.value);
    ctx.redraw();
  });
  label.append("Each cell ", select);
  ctx.root.querySelector(".ax-controls").appendChild(label);
  ctx.root.querySelector(".ax-export").hidden = true; // a picture needs every value: not sent
  for (const [i, fig] of ctx.panels.entries()) {
    const map = fig.querySelector(".ax-map");
    map.addEventListener("mousemove", (e) => showTip(ctx, e, i));
    map.addEventListener("mouseleave", () => {
      ctx.root.querySelector(".ax-tip").hidden = true;
    });
    map.addEventListener("mousedown", (e) => {
      e.preventDefault();
      ctx.root.focus({ preventScroll: true });
      onPress(ctx, e, fig);
    });
    map.addEventListener("wheel", (e) => onWheel(ctx, e), { passive: false });
    map.addEventListener("dblclick", () => {
      ctx.state.unzoom();
      ctx.redraw();
    });
  }
}
