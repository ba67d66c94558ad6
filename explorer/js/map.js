// Map mode's geometry (a sentence longer than header.map.from tokens): a head's stage is drawn
// whole, pooled by the server to at most header.map.side cells a side (a cell is a block × block
// square of tokens, block = ceil(the window's longest side / side)), and a window whose block
// is 1 is drawn from full-resolution tiles of header.map.tile × tile tokens, fetched on a fixed
// grid so that every view reuses them. Between (a zoom whose block is still > 1) the server
// pools the window itself at its own finer block: one request, never more cells than the
// screen. Mirrors attention_core/methods/pack_map.py (block_of, map_shape). Pure functions (no
// DOM): tests/js/map.test.js runs them.

// Is the sentence explored as a map (the server said so in its header)?
export function isMap(header) {
  return !!header.map;
}

// The whole sentence as a window: rows [r0, r1) × columns [c0, c1), token positions.
export function wholeWindow(n) {
  return { r0: 0, r1: n, c0: 0, c1: n };
}

// Tokens a side of one pooled cell of `w` (pack_map.block_of).
export function blockOf(w, side) {
  return Math.ceil(Math.max(w.r1 - w.r0, w.c1 - w.c0) / side);
}

// Rows and columns of `w` pooled at `block` (the last block of each may be smaller).
export function pooledShape(w, block) {
  return { rows: Math.ceil((w.r1 - w.r0) / block), cols: Math.ceil((w.c1 - w.c0) / block) };
}

// The tokens a pooled cell (r, c) of `w` stands for: {r0, r1, c0, c1}.
export function cellTokens(w, block, r, c) {
  const r0 = w.r0 + r * block;
  const c0 = w.c0 + c * block;
  return { r0, r1: Math.min(w.r1, r0 + block), c0, c1: Math.min(w.c1, c0 + block) };
}

// The tiles (on the grid of `tile` tokens, clipped to `n`) that cover `w`: [{i, j, window}].
export function tilesOver(w, tile, n) {
  const out = [];
  for (let i = Math.floor(w.r0 / tile); i * tile < w.r1; i++) {
    for (let j = Math.floor(w.c0 / tile); j * tile < w.c1; j++) out.push(tileAt(i, j, tile, n));
  }
  return out;
}

function tileAt(i, j, tile, n) {
  const window = [i * tile, Math.min(n, (i + 1) * tile), j * tile, Math.min(n, (j + 1) * tile)];
  return { i, j, window };
}

// The tiles next to those covering `w` (one tile step each way, inside the sentence), the ones
// a pan reaches first: fetched after drawing.
export function tilesAround(w, tile, n) {
  const span = (lo, hi) => [Math.floor(lo / tile) - 1, Math.ceil(hi / tile)];
  const [i0, i1] = span(w.r0, w.r1);
  const [j0, j1] = span(w.c0, w.c1);
  const last = Math.ceil(n / tile) - 1;
  const out = [];
  for (let i = Math.max(0, i0); i <= Math.min(last, i1); i++) {
    for (let j = Math.max(0, j0); j <= Math.min(last, j1); j++) {
      const inside = i >= i0 + 1 && i < i1 && j >= j0 + 1 && j < j1;
      if (!inside) out.push(tileAt(i, j, tile, n));
    }
  }
  return out;
}

// The window's values [rows × cols] put together from its tiles' arrays (`arrays` in the order
// of tilesOver), row-major, a row `w.c1 - w.c0` long.
export function assemble(w, tiles, arrays) {
  const cols = w.c1 - w.c0;
  const out = new Float32Array((w.r1 - w.r0) * cols);
  for (const [t, { window }] of tiles.entries()) {
    const [r0, r1, c0, c1] = window;
    const width = c1 - c0;
    const lo = Math.max(c0, w.c0);
    const hi = Math.min(c1, w.c1);
    for (let r = Math.max(r0, w.r0); r < Math.min(r1, w.r1); r++) {
      const from = (r - r0) * width + (lo - c0);
      out.set(arrays[t].subarray(from, from + hi - lo), (r - w.r0) * cols + (lo - w.c0));
    }
  }
  return out;
}

// The switches a map or tile is computed under, as the server checks them (pack_map.Settings):
// changing any of them asks the server again.
export function settingsOf(view) {
  return { scale: !!view.scale, temp: Number(view.temp), causal: !!view.causal };
}

// The fields of one request: part "map" (pooled, mean then max) or "tile" (full resolution).
export function headFields(part, view, stage, window) {
  const { layer, head } = view;
  const w = Array.isArray(window) ? window : [window.r0, window.r1, window.c0, window.c1];
  return { part, layer, head, stage, settings: settingsOf(view), window: w };
}

// The plane of a map block [2, rows, cols] drawn: the mean (0) or the max (1) of each block.
export function plane(block, rows, cols, pooling) {
  const size = rows * cols;
  return pooling === "max" ? block.subarray(size, 2 * size) : block.subarray(0, size);
}

// `count` token positions from `first`, `step` apart: the rows or columns a view shows.
export function positions(first, count, step = 1) {
  return Array.from({ length: count }, (_, i) => first + i * step);
}
