// The attention explorer: one head's stages for a sentence (the four of its pattern by default;
// also the norm-weighted pattern and the layer's rollout), every switch redrawn here in the
// browser. An adapter (streamlit.js, widget.js) hands it the sentence's header, a state
// (state.js: the one owner of the view), a source of layer blocks (source.js) and what to do
// once a view is drawn (tell the server, sync the widget's traits); this module composes the
// control bar (controls.js), the panels (panels.js), the pointer and keys (pointer.js), the cell
// arithmetic (cell.js) and export (export.js).

import { drawCell } from "./cell.js";
import { buildView, syncControls, wireControls } from "./controls.js";
import { holderIn, scaleOf } from "./draw.js";
import { fileName, save } from "./export.js";
import { viewTitle } from "./model.js";
import { drawPanels } from "./panels.js";
import { wireKeys, wirePointer } from "./pointer.js";
import { partsFor, stageValues } from "./stages.js";
import { STAGE_TITLES } from "./words.js";

// Ask the source for a block once per view, and run `then` when it arrives (or fails).
function ask(ctx, layer, part, then) {
  const key = `${layer}:${part}`;
  if (ctx.asked.has(key)) return;
  ctx.asked.add(key);
  const done = () => {
    ctx.asked.delete(key);
    then();
  };
  ctx.source.block(layer, part).then(done, done);
}

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
  const status = ctx.root.querySelector(".ax-status");
  const failed = missing.find(([, block]) => block);
  status.textContent = failed
    ? `Could not load layer ${view.layer}: ${failed[1].error}.`
    : missing.length
      ? `loading layer ${view.layer}…`
      : "";
  for (const [part, block] of missing) if (!block) ask(ctx, view.layer, part, ctx.redraw);
  return missing.length ? null : blocks;
}

function draw(ctx) {
  if (!ctx.alive) return;
  const view = ctx.state.get();
  ctx.root.querySelector(".ax-title").textContent = viewTitle(
    ctx.header,
    view,
    ctx.title,
    ctx.stages,
  );
  syncControls(ctx.root, view);
  const blocks = layerBlocks(ctx, view);
  if (!blocks) return;
  ctx.blocks = blocks; // the cell readout takes the value norms from here
  ctx.values = stageValues(blocks, view, ctx.header, ctx.values);
  drawPanels(ctx);
  drawCell(ctx);
  ctx.root.dataset.drawn = String(ctx.state.countDrawn()); // benchmarks and tests wait on it
  ctx.root.dataset.view = JSON.stringify(view);
  ctx.onDrawn(view);
}

// What export.js draws: the title, the tokens and each panel as it is on screen.
function exportSpec(ctx) {
  const view = ctx.state.get();
  const { rows, cols } = ctx.shown;
  const panels = ctx.stages.map((stage, i) => {
    const map = ctx.panels[i].querySelector(".ax-map");
    const bar = ctx.panels[i].querySelector(".ax-bar canvas");
    const [values, range, scale] = [ctx.values[stage], ctx.ranges[stage], scaleOf(stage)];
    const image = rows.length * cols.length > 64 * 64 ? map.toDataURL("image/png") : null;
    const title = STAGE_TITLES[stage];
    return { title, values, range, scale, rows, cols, image, canvas: map, bar, n: ctx.n };
  });
  for (const p of panels) Object.assign(p, { transpose: view.transpose, blank: ctx.blank });
  return { title: viewTitle(ctx.header, view, ctx.title, ctx.stages), tokens: ctx.tokens, panels };
}

function exportView(ctx, kind) {
  if (!ctx.values || !ctx.shown) return;
  const doc = ctx.root.ownerDocument;
  save(exportSpec(ctx), kind, fileName(ctx.model, ctx.state.get(), kind), doc);
}

// Once the first view is drawn, ask for the other layers' blocks too (the parts its stages
// need) when the whole sentence's are this many bytes or fewer (scores: 170 tokens on MiniLM,
// 88 on SmolLM2), so a layer switch never waits.
const PREFETCH_BYTES = 8 * 2 ** 20;
const PART_FLOATS = {
  scores: (h, n) => h * n * n,
  norms: (h, n) => h * n,
  rollout: (_, n) => n * n,
};

function prefetch(source, header, first, parts) {
  const n = header.n_tokens;
  const perLayer = parts.reduce((sum, part) => sum + PART_FLOATS[part](header.n_heads, n), 0);
  if (4 * header.n_layers * perLayer > PREFETCH_BYTES) return;
  const all = (layer) => Promise.all(parts.map((part) => source.block(layer, part)));
  const rest = async () => {
    for (let layer = 0; layer < header.n_layers; layer++) {
      if (layer !== first) await all(layer);
    }
  };
  all(first)
    .then(rest)
    .catch(() => {});
}

function context(options, built, state) {
  const { header } = options;
  const ctx = { ...options, ...built, state, header, alive: true, asked: new Set() };
  Object.assign(ctx, { n: header.n_tokens, dk: header.d_head, tokens: header.tokens });
  ctx.allowed = (name) => !options.controls || options.controls.includes(name);
  ctx.redraw = () => draw(ctx);
  ctx.redrawCell = () => ctx.alive && ctx.values && drawCell(ctx);
  ctx.onDrawn ||= () => {};
  return ctx;
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
  wirePointer(ctx);
  const unkey = wireKeys(ctx, ctx.allowed, options.pageKeys);
  // The view's width as laid out (read here, so a switch never asks the layout for it).
  const resize = new ResizeObserver((entries) => {
    ctx.width = entries[0].borderBoxSize?.[0]?.inlineSize || 0;
    if (ctx.alive && ctx.values) drawPanels(ctx);
  });
  resize.observe(ctx.root);
  draw(ctx);
  if (!options.inline) prefetch(options.source, header, state.get().layer, partsFor(ctx.stages));
  return () => {
    ctx.alive = false;
    unsubscribe();
    unkey();
    resize.disconnect();
  };
}
