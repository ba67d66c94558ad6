// Every head at once: one small pattern per head (the trained model's setting: scaled by √d_k,
// no mask, temperature 1), or, with a token pinned (pin.js, pinbar.js), only its row or column. Up to GRID_FROM_SCORES tokens it is drawn from the same layer blocks
// as the full view (prefetched there anyway); longer sentences fetch the engine's thumbnails,
// pooled by attention_core.methods.pack.pool_blocks (query rows averaged, key columns summed, so a
// thumbnail row still sums to 1): 72 × 48² floats instead of every layer's n² scores.

import { holderIn, paint, SCALES } from "./draw.js";
import { headsPerKv, roleBadge, sharing, startsGroup } from "./model.js";
import { pinStrip, pinText, pooledIndex, pooledStrip, strongest } from "./pin.js";
import { buildPinBar, syncPinBar, wirePinBar } from "./pinbar.js";
import { placeTip } from "./pointer.js";
import { rolesFrom } from "./protocol.js";
import { computeStages, headScores, poolPattern, visibleTokens } from "./stages.js";
import { createState } from "./state.js";
import { metricText } from "./words.js";

const GRID_FROM_SCORES = 128;
export const NO_PIN = { pin: -1, along: "row" }; // nothing pinned; a pin shows its row

function thumbCanvas(header, row, i, head) {
  const canvas = document.createElement("canvas");
  canvas.className = "ax-thumb";
  // Heads in number order: a gap before each group that shares keys and values (GQA).
  const per = headsPerKv(header.n_heads, header.n_kv_heads);
  if (startsGroup(head, per) && i > 0 && row.heads[i - 1] === head - 1) {
    canvas.classList.add("ax-kv-start");
  }
  canvas.dataset.layer = String(row.layer);
  canvas.dataset.head = String(head);
  canvas.setAttribute("role", "button");
  canvas.setAttribute("aria-label", `open layer ${row.layer}, head ${head}`);
  canvas.tabIndex = 0;
  return canvas;
}

function buildGrid(grid, data) {
  const tiles = new Map();
  const widest = Math.max(...data.rows.map((r) => r.heads.length));
  grid.style.gridTemplateColumns = `70px repeat(${widest}, minmax(0, 1fr))`;
  for (const row of data.rows) {
    const label = document.createElement("div");
    label.className = "ax-layer";
    label.textContent = `layer ${row.layer}`;
    label.style.gridColumn = "1";
    grid.appendChild(label);
    for (const [i, head] of row.heads.entries()) {
      const canvas = thumbCanvas(data.header, row, i, head);
      grid.appendChild(canvas);
      tiles.set(`${row.layer}:${head}`, canvas);
    }
  }
  return tiles;
}

// How a head's tile is made: from the scores (small sentences) or the engine's thumbnails, f
// shown tokens to a pixel. `strip` is a pinned token's row or column: every shown token's
// weight from the scores, or the pooled thumbnail's row or column of the pinned token's block.
function thumbnails(data) {
  const { header } = data;
  const n = header.n_tokens;
  const keep = visibleTokens(header, data.hide_special);
  const f = Math.ceil(keep.length / data.max_tile);
  const side = Math.ceil(keep.length / f);
  const fromScores = n <= GRID_FROM_SCORES;
  const part = fromScores ? "scores" : data.hide_special ? "thumbs_visible" : "thumbs";
  const sw = { scale: true, temperature: 1, causal: !!header.causal };
  let lent = null; // the last head's stages, whose arrays the next head's reuse
  const pattern = (block, head) => {
    lent = computeStages(headScores(block, head, n), n, header.d_head, sw, lent);
    return lent.pattern;
  };
  const pooled = (block, head) => block.subarray(head * side * side, (head + 1) * side * side);
  const thumb = (block, head) =>
    fromScores ? poolPattern(pattern(block, head), n, keep, f, side) : pooled(block, head);
  const strip = (block, head, { pin, along }) =>
    fromScores
      ? pinStrip(pattern(block, head), n, keep, pin, along)
      : pooledStrip(pooled(block, head), side, pooledIndex(keep, pin, f), along);
  return { part, side, keep, f: fromScores ? 1 : f, thumb, strip };
}

// Paint one tile: the head's thumbnail, or with a pin its strip (a row drawn across, a column
// down), and keep what its tooltip says about the pin.
function paintTile(tile, shape, block, head, pinned, words) {
  const paintAs = (values, rows, cols, n) =>
    paint(tile, values, n, rows, cols, false, [0, 1], SCALES.weights, [0, 0, 0]);
  if (!pinned) {
    const idx = [...Array(shape.side).keys()];
    paintAs(shape.thumb(block, head), idx, idx, shape.side);
    delete tile.dataset.pin;
    return;
  }
  const values = shape.strip(block, head, pinned);
  const idx = [...values.keys()];
  if (pinned.along === "column") paintAs(values, idx, [0], 1);
  else paintAs(values, [0], idx, values.length);
  const top = strongest(values);
  tile.dataset.pin = pinText({ ...words, ...pinned, keep: shape.keep, f: shape.f }, top);
  tile.dataset.top = JSON.stringify(top);
}

function wireGrid(root, grid, data, onOpen, roles) {
  const tip = root.querySelector(".ax-tip");
  const describe = (canvas) => {
    const layer = Number(canvas.dataset.layer);
    const head = Number(canvas.dataset.head);
    const lines = [`layer ${layer}, head ${head}${sharing(data.header, head)}`];
    const badge = roleBadge({ ...data.header, roles: roles.value }, { layer, head });
    if (badge) lines.push(`job by the rule: ${badge}`);
    for (const [label, values] of Object.entries(data.metrics)) {
      lines.push(`${label}: ${metricText(values[layer][head])}`);
    }
    if (canvas.dataset.pin) lines.push(canvas.dataset.pin);
    return lines.join("\n");
  };
  grid.addEventListener("mousemove", (e) => {
    const canvas = e.target.closest(".ax-thumb");
    tip.hidden = !canvas;
    if (!canvas) return;
    tip.textContent = describe(canvas);
    placeTip(tip, root, e);
  });
  grid.addEventListener("mouseleave", () => {
    tip.hidden = true;
  });
  const open = (canvas) =>
    onOpen({ layer: Number(canvas.dataset.layer), head: Number(canvas.dataset.head) });
  grid.addEventListener("click", (e) => {
    const canvas = e.target.closest(".ax-thumb");
    if (canvas) open(canvas);
  });
  grid.addEventListener("keydown", (e) => {
    const canvas = e.target.closest(".ax-thumb");
    if (canvas && (e.key === "Enter" || e.key === " ")) {
      e.preventDefault();
      open(canvas);
    }
  });
}

const GRID_SKELETON =
  '<div class="ax ax-heads"><div class="ax-status" role="status"></div>' +
  '<div class="ax-pinbar"></div><div class="ax-grid-heads"></div>' +
  '<div class="ax-tip" role="tooltip" hidden></div></div>';

// What the note under the pin bar says.
function pinNote(pinned, tokens, f) {
  if (!pinned) return "";
  const what =
    pinned.along === "column"
      ? "its column: how much weight each token (top to bottom) gives it"
      : "its row: how much weight it gives each token (left to right)";
  const pooled = f > 1 ? ` A pixel there is a block of ${f} tokens.` : "";
  return `Pinned “${tokens[pinned.pin]}” (${pinned.pin}): every tile shows ${what}.${pooled} Click it again to unpin.`;
}

// The drawing of one grid: each layer's tiles once its block arrives, all of them again when
// the pin changes (from the blocks already here: no round trip).
function painter(root, data, source, pin) {
  const tiles = buildGrid(root.querySelector(".ax-grid-heads"), data);
  const shape = thumbnails(data);
  const words = { tokens: data.header.tokens };
  const layers = [...new Set(data.rows.map((r) => r.layer))];
  const bar = root.querySelector(".ax-pinbar");
  const self = { alive: true, drawn: 0, pinDraws: 0, shape, layers, bar };
  self.pinned = () => (shape.keep.includes(pin.get().pin) ? pin.get() : null); // hidden: none
  self.note = () => pinNote(self.pinned(), words.tokens, shape.f);
  self.paintLayer = (layer, block) => {
    for (const row of data.rows.filter((r) => r.layer === layer)) {
      for (const head of row.heads) {
        paintTile(tiles.get(`${layer}:${head}`), shape, block, head, self.pinned(), words);
      }
    }
  };
  self.drawLayer = (layer) => {
    if (!self.alive) return;
    const block = source.peek(layer, shape.part);
    if (!block) {
      const again = () => self.drawLayer(layer);
      source.block(layer, shape.part).then(again, again);
    } else if (block.error) {
      root.querySelector(".ax-status").textContent =
        `Could not load layer ${layer}: ${block.error}`;
    } else {
      self.paintLayer(layer, block);
      root.dataset.drawn = String(++self.drawn);
      if (self.drawn === layers.length) self.whenAll?.();
    }
  };
  self.repin = () => {
    syncPinBar(bar, pin.get(), self.note());
    for (const layer of layers) {
      const block = source.peek(layer, shape.part);
      if (block && !block.error) self.paintLayer(layer, block);
    }
    root.dataset.pinDrawn = String(++self.pinDraws); // tests wait on it
  };
  return self;
}

// Draw the grid of `data` (header, rows: [{layer, heads}], metrics, hide_special, max_tile)
// into `parent` from `source`; a click or Enter on a head calls onOpen({layer, head}). `pin`
// (state.js, {pin, along}) holds the pinned token, kept by the adapter across reruns.
export function renderGrid(parent, data, source, onOpen, pin = createState(NO_PIN)) {
  const holder = holderIn(parent);
  holder.innerHTML = GRID_SKELETON;
  const root = holder.querySelector(".ax");
  const grid = painter(root, data, source, pin);
  // A long sentence's header has no roles (scoring reads every layer): asked for once every
  // thumbnail is drawn, so they never hold the tiles up; the tooltips name them from then on.
  const roles = { value: data.header.roles };
  if (!roles.value) {
    grid.whenAll = () =>
      source.block(0, "roles").then(
        (bytes) => (roles.value = rolesFrom(bytes)),
        () => {},
      );
  }
  buildPinBar(grid.bar, data.header.tokens, grid.shape.keep);
  syncPinBar(grid.bar, pin.get(), grid.note());
  for (const layer of grid.layers) grid.drawLayer(layer);
  wireGrid(root, root.querySelector(".ax-grid-heads"), data, onOpen, roles);
  wirePinBar(grid.bar, pin);
  const unsubscribe = pin.subscribe(grid.repin);
  return () => {
    grid.alive = false;
    unsubscribe();
  };
}
