// The attention explorer: one head's stages for a sentence (the four of its pattern by default;
// also the norm-weighted pattern and the layer's rollout), every switch redrawn here in the
// browser. An adapter (streamlit.js, widget.js) hands it the sentence's header, a state
// (state.js: the one owner of the view), a source of layer blocks (source.js) and what to do
// once a view is drawn (tell the server, sync the widget's traits); this module composes the
// control bar (controls.js), the panels (panels.js), the pointer and keys (pointer.js), the cell
// arithmetic (cell.js) and export (export.js). A sentence longer than header.map.from tokens
// is drawn as a map instead (mapview.js: its heads' stages computed on the server, pooled or
// in tiles), its roles asked for once the first chart is drawn.
//
// They share one context (context() below), frozen: what is fixed for the view at the top (its
// header, state, source, markup, redraw()), and each part that changes held by the one module
// that writes it: ctx.live and ctx.computed here, ctx.painted in panels.js, ctx.mapped in
// mapview.js. The view's state
// (zoom included) changes only through its owner, state.js.

import { drawCell } from "./cell.js";
import { buildView, syncControls, wireControls } from "./controls.js";
import { holderIn, scaleOf } from "./draw.js";
import { fileName, save } from "./export.js";
import { isMap } from "./map.js";
import { drawMap, drawMapCell, mappedState } from "./mapview.js";
import { wireMap } from "./mappointer.js";
import { roleBadge, viewTitle } from "./model.js";
import { rolesFrom } from "./protocol.js";
import { drawPanels, paintedState } from "./panels.js";
import { wireKeys, wirePointer } from "./pointer.js";
import { askOnce, prefetchLayers } from "./source.js";
import { partsFor, stageValues } from "./stages.js";
import { loadStatus, STAGE_TITLES } from "./words.js";

// The blocks of the view's layer its stages need ({scores, norms, rollout}): carried inline,
// arrived, or null (the missing ones asked for; status shown).
function layerBlocks(ctx, view) {
  const blocks = {};
  const missing = [];
  for (const part of partsFor(ctx.stages)) {
    const block = part === "scores" && ctx.inline ? ctx.inline : ctx.source.peek(view.layer, part);
    if (block && !block.error) blocks[part] = block;
    else missing.push([part, block]);
  }
  const failed = missing.find(([, block]) => block);
  ctx.root.querySelector(".ax-status").textContent = loadStatus(
    view.layer,
    missing.length > 0,
    failed?.[1].error,
  );
  for (const [part, block] of missing) {
    if (!block) askOnce(ctx.source, ctx.live.asked, view.layer, part, ctx.redraw);
  }
  return missing.length ? null : blocks;
}

function draw(ctx) {
  if (!ctx.live.alive) return;
  const view = ctx.state.get();
  ctx.root.querySelector(".ax-title").textContent = viewTitle(
    ctx.header,
    view,
    ctx.title,
    ctx.stages,
  );
  const roles = ctx.header.roles || ctx.computed.roles;
  const badge = roleBadge({ ...ctx.header, roles }, view, ctx.stages);
  ctx.root.querySelector(".ax-role").textContent = badge;
  syncControls(ctx.root, view);
  if (ctx.map) {
    if (drawMap(ctx)) drawn(ctx, view);
    return;
  }
  const blocks = layerBlocks(ctx, view);
  if (!blocks) return;
  const computed = ctx.computed;
  computed.blocks = blocks; // the cell readout takes the value norms from here
  computed.values = stageValues(blocks, view, ctx.header, computed.values);
  drawPanels(ctx);
  drawCell(ctx);
  drawn(ctx, view);
}

function drawn(ctx, view) {
  ctx.root.dataset.drawn = String(ctx.state.countDrawn()); // benchmarks and tests wait on it
  ctx.root.dataset.view = JSON.stringify(view);
  ctx.onDrawn(view);
  if (ctx.map && !ctx.header.roles && !ctx.computed.roles) askRoles(ctx);
}

// A long sentence's header comes without its heads' roles (scoring reads every layer: ~10 s
// at 2,048 tokens), so the first chart never waits for them: asked once it is drawn, and the
// heading's badge filled in when they come.
function askRoles(ctx) {
  askOnce(ctx.source, ctx.live.asked, 0, "roles", () => {
    const bytes = ctx.source.peek(0, "roles");
    if (!bytes || bytes.error) return;
    ctx.computed.roles = rolesFrom(bytes);
    ctx.redraw();
  });
}

// What export.js draws: the title, the tokens and each panel as it is on screen.
function exportSpec(ctx) {
  const view = ctx.state.get();
  const { shown, ranges, blank } = ctx.painted;
  const { rows, cols } = shown;
  const panels = ctx.stages.map((stage, i) => {
    const map = ctx.panels[i].querySelector(".ax-map");
    const bar = ctx.panels[i].querySelector(".ax-bar canvas");
    const [values, range, scale] = [ctx.computed.values[stage], ranges[stage], scaleOf(stage)];
    const image = rows.length * cols.length > 64 * 64 ? map.toDataURL("image/png") : null;
    const title = STAGE_TITLES[stage];
    return { title, values, range, scale, rows, cols, image, canvas: map, bar, n: ctx.n };
  });
  for (const p of panels) Object.assign(p, { transpose: view.transpose, blank });
  return { title: viewTitle(ctx.header, view, ctx.title, ctx.stages), tokens: ctx.tokens, panels };
}

function exportView(ctx, kind) {
  if (!ctx.computed.values || !ctx.painted.shown) return;
  const doc = ctx.root.ownerDocument;
  save(exportSpec(ctx), kind, fileName(ctx.model, ctx.state.get(), kind), doc);
}

// The view's context: what is fixed for it, and the parts that change, each written by one
// module only: `live` (here: alive until the cleanup, the blocks asked for, the width as laid
// out), `computed` (here: the layer's blocks and the stages computed from them) and `painted`
// (panels.js: the shown tokens, colour ranges). Frozen, so no module adds a field of its own.
function context(options, built, state) {
  const { header, source, inline, model, title, controls } = options;
  const ctx = { header, state, source, inline, model, title, ...built };
  Object.assign(ctx, { n: header.n_tokens, dk: header.d_head, tokens: header.tokens });
  ctx.allowed = (name) => !controls || controls.includes(name);
  ctx.onDrawn = options.onDrawn || (() => {});
  ctx.live = { alive: true, asked: new Set(), width: 0 };
  ctx.computed = { blocks: null, values: null, roles: null };
  ctx.painted = paintedState();
  ctx.map = isMap(header); // a long sentence: its heads' stages come from the server (mapview.js)
  ctx.mapped = mappedState();
  ctx.redraw = () => draw(ctx);
  ctx.redrawCell = () =>
    ctx.live.alive && (ctx.map ? drawMapCell(ctx) : ctx.computed.values && drawCell(ctx));
  return Object.freeze(ctx);
}

// Draw the explorer into `parent`. options: header, state, source (or inline scores), model,
// stages, controls, title, pageKeys (← → work page-wide), widget,
// onDrawn(view). Returns the cleanup.
export function renderView(parent, options) {
  const { header, state } = options;
  if (header.causal) state.set({ causal: true }); // a decoder's own mask is part of the model
  const built = buildView(holderIn(parent), header, options);
  const ctx = context(options, built, state);
  const unsubscribe = state.subscribe(ctx.redraw);
  wireControls(ctx.root, state, (kind) => exportView(ctx, kind));
  if (ctx.map) wireMap(ctx);
  else wirePointer(ctx);
  const unkey = wireKeys(ctx, ctx.allowed, options.pageKeys);
  // The view's width as laid out (read here, so a switch never asks the layout for it).
  const resize = new ResizeObserver((entries) => {
    ctx.live.width = entries[0].borderBoxSize?.[0]?.inlineSize || 0;
    if (ctx.live.alive && ctx.map && ctx.mapped.shown) drawMap(ctx);
    else if (ctx.live.alive && ctx.computed.values) drawPanels(ctx);
  });
  resize.observe(ctx.root);
  draw(ctx);
  if (!options.inline && !ctx.map) {
    prefetchLayers(options.source, header, state.get().layer, partsFor(ctx.stages));
  }
  return () => {
    ctx.live.alive = false;
    unsubscribe();
    unkey();
    resize.disconnect();
  };
}
